using System.Buffers;
using System.Text;
using System.Text.Json;
using Frontend.Api.Grpc;
using Google.Protobuf;
using Grpc.Core;
using HttpPerf.Catalog.Grpc;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// Frontend.Grpc's reader of a message on what the Catalog does not send today but protobuf allows (fields it does not
/// know, fields left at their defaults) and on what it must refuse (a message cut short), and the problem each gRPC
/// status becomes before the list has begun (docs/pitfalls/Frontend.Grpc.md).
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
[Lesson(Pitfalls.FrontendGrpc)]
public sealed class GrpcMessageTests
{
    [Fact]
    public void The_reader_skips_fields_it_does_not_know_and_reads_left_out_ones_as_defaults()
    {
        var known = new Product { Id = 7, Sku = "SKU-7", Name = "Boots", Description = "Café 🧭", Brand = "Contoso", Category = "Travel", PriceCents = 12_345, Stock = 3 };
        // Field 9 (a varint), field 10 (a string) and field 11 (32-bit) after the known ones: what a newer Catalog may add.
        byte[] unknown = [9 << 3, 0x96, 0x01, 10 << 3 | 2, 2, (byte)'h', (byte)'i', 11 << 3 | 5, 1, 2, 3, 4];
        var first = known.ToByteArray().Concat(unknown).ToArray();
        var second = new Product { Id = 8 }.ToByteArray();
        byte[] message = [0x0A, (byte)first.Length, .. first, 12 << 3, 0x01, 0x0A, (byte)second.Length, .. second];

        using var batch = ProductBatch.CopyOf(new ReadOnlySequence<byte>(message));
        var reader = new ProductBatchReader(batch);

        Assert.True(reader.Read());
        Assert.Equal((7, "SKU-7", "Boots", "Café 🧭", "Contoso", "Travel", 123.45m, 3),
            (reader.Id, Text(reader.Sku), Text(reader.Name), Text(reader.Description), Text(reader.Brand), Text(reader.Category), reader.Price, reader.Stock));
        Assert.True(reader.Read());
        Assert.Equal((8, "", "", 0m, 0), (reader.Id, Text(reader.Sku), Text(reader.Category), reader.Price, reader.Stock));
        Assert.False(reader.Read());
    }

    [Theory]
    [InlineData(1)]
    [InlineData(5)]
    [InlineData(40)]
    public void The_reader_refuses_a_message_cut_short(int missing)
    {
        var list = new ProductList { Products = { new Product { Id = 1, Sku = "SKU-1", Description = new string('d', 60) }, new Product { Id = 2, Sku = "SKU-2" } } }.ToByteArray();
        using var batch = ProductBatch.CopyOf(new ReadOnlySequence<byte>(list[..^missing]));
        var reader = new ProductBatchReader(batch);

        Assert.Throws<InvalidDataException>(() =>
        {
            while (reader.Read())
            {
            }
        });
    }

    [Theory]
    [InlineData(StatusCode.Unavailable, 503, "Catalog unavailable")]
    [InlineData(StatusCode.DeadlineExceeded, 504, "Catalog too slow")]
    [InlineData(StatusCode.ResourceExhausted, 502, "Catalog answer too large")]
    [InlineData(StatusCode.Internal, 502, "Catalog call failed")]
    public async Task A_failed_call_is_the_problem_its_status_says(StatusCode status, int expected, string title)
    {
        using var services = new ServiceCollection().AddLogging().AddProblemDetails().BuildServiceProvider();
        var context = new DefaultHttpContext { RequestServices = services };
        var body = new MemoryStream();
        context.Response.Body = body;
        var handler = new GrpcProblems(services.GetRequiredService<IProblemDetailsService>());

        Assert.True(await handler.TryHandleAsync(context, new RpcException(new Status(status, "the detail")), TestContext.Current.CancellationToken));

        Assert.Equal(expected, context.Response.StatusCode);
        Assert.Equal(expected == 503 ? "2" : "", context.Response.Headers.RetryAfter.ToString());
        Assert.Equal("application/problem+json", context.Response.ContentType);
        using var problem = JsonDocument.Parse(body.ToArray());
        Assert.Equal(title, problem.RootElement.GetProperty("title").GetString());
        Assert.Equal(expected, problem.RootElement.GetProperty("status").GetInt32());
        Assert.Contains($"{status}: the detail", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.False(await handler.TryHandleAsync(new DefaultHttpContext { RequestServices = services }, new InvalidOperationException(), TestContext.Current.CancellationToken));
    }

    private static string Text(ReadOnlySpan<byte> utf8) => Encoding.UTF8.GetString(utf8);
}
