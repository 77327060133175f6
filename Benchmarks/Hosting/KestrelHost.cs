using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Benchmarks.Hosting;

/// <summary>A web app on real Kestrel on a loopback port, in the benchmark's process.</summary>
public sealed class KestrelHost : IAsyncDisposable
{
    private readonly WebApplication _app;

    private KestrelHost(WebApplication app, Uri baseAddress)
    {
        _app = app;
        BaseAddress = baseAddress;
    }

    public Uri BaseAddress { get; }

    /// <summary>The app's services: to run one of its classes without HTTP.</summary>
    public IServiceProvider Services => _app.Services;

    public static async Task<KestrelHost> StartAsync(
        IReadOnlyDictionary<string, string?> configuration, Action<WebApplicationBuilder> configureServices, Action<WebApplication> configurePipeline)
    {
        var builder = WebApplication.CreateBuilder(new WebApplicationOptions { EnvironmentName = "Production" });
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        builder.Configuration.AddInMemoryCollection(configuration);
        configureServices(builder);
        var app = builder.Build();
        configurePipeline(app);
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        return new KestrelHost(app, new Uri(address));
    }

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();
}
