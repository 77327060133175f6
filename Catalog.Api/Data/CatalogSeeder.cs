using Microsoft.Data.Sqlite;

namespace Catalog.Api.Data;

/// <summary>
/// Creates the SQLite file at first start, deterministically (fixed seed), before the server listens.
/// It is written under a temporary name and moved into place, so a crash mid-seed never leaves a
/// half-filled store behind.
/// </summary>
public sealed class CatalogSeeder(CatalogStore store, ILogger<CatalogSeeder> logger) : IHostedService
{
    private static readonly string[] Adjectives = ["Rugged", "Compact", "Classic", "Urban", "Alpine", "Coastal", "Everyday", "Summit", "Trail", "Heritage", "Nimble", "Quiet"];
    private static readonly string[] Materials = ["Canvas", "Merino", "Nylon", "Leather", "Bamboo", "Steel", "Cotton", "Carbon", "Wool", "Cork"];
    private static readonly string[] Nouns = ["Backpack", "Jacket", "Bottle", "Lantern", "Tent", "Boots", "Gloves", "Scarf", "Mug", "Stove", "Hammock", "Compass"];
    private static readonly string[] Brands = ["Northwind", "Contoso", "Fabrikam", "Tailspin", "Woodgrove", "Litware", "Proseware", "Adventure Works"];
    private static readonly string[] Categories = ["Outdoor", "Apparel", "Kitchen", "Travel", "Camping", "Footwear", "Accessories"];
    private static readonly string[] Phrases =
    [
        "Built for long days outside and easy to repair in the field.",
        "Weather resistant seams keep the contents dry in steady rain.",
        "Packs down small and weighs less than most in its class.",
        "Tested through a full season by our own guides before release.",
        "Made with recycled fibres and shipped without plastic.",
        "A lifetime warranty covers every stitch and buckle.",
        "Comfortable from the first wear with no breaking in needed.",
        "Designed in the mountains and refined over three generations.",
    ];

    public Task StartAsync(CancellationToken cancellationToken)
    {
        if (File.Exists(store.DatabasePath))
        {
            return Task.CompletedTask;
        }

        var started = TimeProvider.System.GetTimestamp();
        Directory.CreateDirectory(Path.GetDirectoryName(store.DatabasePath)!);
        var temporary = $"{store.DatabasePath}.{Guid.NewGuid():N}.tmp";
        try
        {
            Seed(temporary, store.ProductCount);
            File.Move(temporary, store.DatabasePath, overwrite: false);
        }
        catch (IOException) when (File.Exists(store.DatabasePath))
        {
            // Another instance seeded the same file first; its content is identical.
        }
        finally
        {
            File.Delete(temporary);
        }

        logger.LogInformation("Seeded {Count} products into {Path} in {Elapsed}", store.ProductCount, store.DatabasePath, TimeProvider.System.GetElapsedTime(started));
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    private static void Seed(string path, int count)
    {
        using var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = path, Pooling = false }.ToString());
        connection.Open();
        using (var create = connection.CreateCommand())
        {
            create.CommandText = """
                CREATE TABLE products (
                    id INTEGER PRIMARY KEY, sku TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
                    brand TEXT NOT NULL, category TEXT NOT NULL, price_cents INTEGER NOT NULL, stock INTEGER NOT NULL)
                """;
            create.ExecuteNonQuery();
        }

        using var transaction = connection.BeginTransaction();
        using var insert = connection.CreateCommand();
        insert.CommandText = "INSERT INTO products VALUES ($id, $sku, $name, $description, $brand, $category, $price, $stock)";
        var parameters = new[] { "$id", "$sku", "$name", "$description", "$brand", "$category", "$price", "$stock" }
            .Select(name => insert.Parameters.Add(new SqliteParameter { ParameterName = name }))
            .ToArray();

        var random = new Random(20_251_122);
        for (var id = 1; id <= count; id++)
        {
            var noun = Pick(random, Nouns);
            parameters[0].Value = id;
            parameters[1].Value = $"SKU-{id:D7}";
            parameters[2].Value = $"{Pick(random, Adjectives)} {Pick(random, Materials)} {noun} {id % 1000:D3}";
            parameters[3].Value = $"{Pick(random, Phrases)} {Pick(random, Phrases)} This {noun.ToLowerInvariant()} comes in {random.Next(2, 9)} colours.";
            parameters[4].Value = Pick(random, Brands);
            parameters[5].Value = Pick(random, Categories);
            parameters[6].Value = random.Next(499, 49_999);
            parameters[7].Value = random.Next(0, 400);
            insert.ExecuteNonQuery();
        }

        transaction.Commit();
    }

    private static string Pick(Random random, string[] values) => values[random.Next(values.Length)];
}
