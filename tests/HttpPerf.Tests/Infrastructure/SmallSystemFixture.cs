using System.Globalization;
using HttpPerf.ServiceDefaults.Contract;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The whole system as real processes with a small catalog (fast to seed and to fetch), exporting
/// telemetry to an in-test OTLP receiver. Shared by the processes lane (<see cref="SharedSystem"/>).
/// </summary>
public sealed class SmallSystemFixture : SharedSystem
{
    public const int ProductCount = 2_000;
    public const int MaxFileBytes = 4 * 1024 * 1024;
    public const int MaxFilesPerRequest = 3;

    public string AdminKey { get; } = $"test-admin-key-{Guid.NewGuid():N}";

    public LocalSystem System { get; private set; } = null!;

    public OtlpReceiver Telemetry { get; private set; } = null!;

    public HttpClient Gateway { get; private set; } = null!;

    protected override async Task StartAsync(CancellationToken cancel)
    {
        Telemetry = await OtlpReceiver.StartAsync();
        System = await LocalSystem.StartAsync(new LocalSystemOptions
        {
            ProductCount = ProductCount,
            AdminKey = AdminKey,
            Environment = new Dictionary<string, string>(Telemetry.ExporterEnvironment)
            {
                ["Uploads__MaxFileBytes"] = MaxFileBytes.ToString(CultureInfo.InvariantCulture),
                ["Uploads__MaxFilesPerRequest"] = MaxFilesPerRequest.ToString(CultureInfo.InvariantCulture),
                [SystemContract.UploadsEnableSink] = "true",
            },
        }, cancel);
        Gateway = new HttpClient { BaseAddress = System.Gateway.BaseAddress };
    }

    protected override async ValueTask StopAsync()
    {
        Gateway?.Dispose();
        if (System is not null)
        {
            await System.DisposeAsync();
        }

        if (Telemetry is not null)
        {
            await Telemetry.DisposeAsync();
        }
    }
}
