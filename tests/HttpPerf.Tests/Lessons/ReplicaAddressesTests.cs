using System.Net;
using HttpPerf.ServiceDefaults.Discovery;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.ServiceDiscovery;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// ServiceDefaults' ReplicaAddresses: a configured name that stands for every replica (a swarm's dnsrr service name)
/// becomes one endpoint per address, on the configured port, when <c>ServiceDiscovery:ReplicaAddresses:Expand</c> is
/// on; off (process and container mode), service discovery gives the name as it is.
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
public sealed class ReplicaAddressesTests
{
    [Fact]
    public async Task Expanded_a_name_is_each_of_its_addresses_on_the_configured_port()
    {
        var endpoints = await ResolveAsync("http://localhost:8080", expand: true);

        Assert.Equal([new IPEndPoint(IPAddress.Loopback, 8080)], endpoints);
    }

    [Fact]
    public async Task Not_expanded_the_name_is_one_endpoint()
    {
        var endpoints = await ResolveAsync("http://localhost:8080", expand: false);

        Assert.Equal(["http://localhost:8080/"], endpoints.Select(e => e.ToString()));
    }

    [Fact]
    public async Task Its_refresh_token_says_it_changed_only_once_every_callback_has_run()
    {
        // A composite token that asked meanwhile would signal itself under its own lock, against the timer's thread
        // holding the composites' locks in the other order: the deadlock that froze the Gateway's destinations.
        var token = new RefreshToken(TimeSpan.FromMilliseconds(50));
        var seenInCallback = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var first = token.RegisterChangeCallback(_ => seenInCallback.TrySetResult(token.HasChanged), null);
        using var second = token.RegisterChangeCallback(_ => Thread.Sleep(50), null);

        Assert.False(token.HasChanged);
        Assert.False(await seenInCallback.Task.WaitAsync(TimeSpan.FromSeconds(10), TestContext.Current.CancellationToken));
        Assert.True(await Poll.UntilAsync(() => token.HasChanged, TimeSpan.FromSeconds(5)));
    }

    [Fact]
    public async Task A_name_that_does_not_resolve_stays_as_it_was()
    {
        var endpoints = await ResolveAsync("http://no-such-replica.invalid:8080", expand: true);

        Assert.Equal(["http://no-such-replica.invalid:8080/"], endpoints.Select(e => e.ToString()));
    }

    private static async Task<List<EndPoint>> ResolveAsync(string address, bool expand)
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["services:catalog:http:0"] = address,
            [$"{ReplicaAddressOptions.Section}:Expand"] = expand ? "true" : "false",
        }).Build();
        var services = new ServiceCollection().AddSingleton<IConfiguration>(configuration).AddLogging();
        services.AddServiceDiscovery();
        ReplicaAddresses.AddTo(services);
        await using var provider = services.BuildServiceProvider();
        var source = await provider.GetRequiredService<ServiceEndpointResolver>().GetEndpointsAsync("http://catalog", TestContext.Current.CancellationToken);
        return [.. source.Endpoints.Select(e => e.EndPoint)];
    }
}
