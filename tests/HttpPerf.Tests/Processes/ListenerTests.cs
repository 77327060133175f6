using System.Globalization;
using System.Net;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// The platform's listening settings move every service, as they move any ASP.NET Core app: <c>ASPNETCORE_URLS</c>,
/// else <c>ASPNETCORE_HTTP_PORTS</c>; and a service's cleartext HTTP/2 listener is where <c>Http2__Port</c> says, on
/// the same host (docs/configuration.md). Each service started as a bare process, with nothing else of the system.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class ListenerTests
{
    public static TheoryData<string, string> ServicesAndSettings => new(
        from service in SystemContract.Services
        from setting in new[] { "ASPNETCORE_URLS", "ASPNETCORE_HTTP_PORTS" }
        select (service.Project, setting));

    [Theory]
    [MemberData(nameof(ServicesAndSettings))]
    public async Task The_platforms_setting_moves_the_HTTP_1_1_listener_and_Http2__Port_the_HTTP_2_one(string project, string setting)
    {
        var work = Directory.CreateTempSubdirectory("httpperf-listeners-").FullName;
        try
        {
            var (http1, http2) = (Ports.Free(), Ports.Free());
            var environment = new Dictionary<string, string>
            {
                [SystemContract.FlagsFile] = Path.Combine(work, "flags.json"),
                [SystemContract.CatalogDataDirectory] = Path.Combine(work, "catalog"),
                [SystemContract.CatalogProductCount] = "100",
                [SystemContract.UploadsDataDirectory] = Path.Combine(work, "uploads"),
                // The platform reads ASPNETCORE_URLS before the ports: unset, the ports decide.
                ["ASPNETCORE_URLS"] = setting == "ASPNETCORE_URLS" ? $"http://127.0.0.1:{http1}" : "",
            };
            if (project != "Gateway")
            {
                environment[SystemContract.Http2Port] = http2.ToString(CultureInfo.InvariantCulture);
            }

            if (setting == "ASPNETCORE_HTTP_PORTS")
            {
                environment[setting] = http1.ToString(CultureInfo.InvariantCulture);
            }

            await using var service = await ServiceProcess.StartAsync(project, LocalSystem.AssemblyPath(project, LocalSystem.CurrentConfiguration), environment, TestContext.Current.CancellationToken);
            Assert.Equal(http1, service.BaseAddress.Port);
            using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{http1}") };
            Assert.Equal(200, (await Http.GetAsync(client, SystemContract.AlivePath)).Status);
            Assert.DoesNotContain("Overriding", service.RecentOutput, StringComparison.Ordinal);

            // HTTP/2 with prior knowledge on its own port, where the service has that listener (the Gateway has none).
            using var h2 = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{http2}"), DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };
            if (project == "Gateway")
            {
                await Assert.ThrowsAsync<HttpRequestException>(() => h2.GetAsync(SystemContract.AlivePath, TestContext.Current.CancellationToken));
            }
            else
            {
                using var answer = await h2.GetAsync(SystemContract.AlivePath, TestContext.Current.CancellationToken);
                Assert.Equal((HttpStatusCode.OK, HttpVersion.Version20), (answer.StatusCode, answer.Version));
            }
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }
}
