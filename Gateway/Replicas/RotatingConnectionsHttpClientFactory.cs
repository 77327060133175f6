using System.Net.Http;
using HttpPerf.ServiceDefaults.Http;
using Microsoft.Extensions.Options;
using Yarp.ReverseProxy.Forwarder;

namespace Gateway.Replicas;

/// <summary>
/// YARP's forwarding client, with pooled connections retired after
/// <see cref="HttpClientOptions.PooledConnectionLifetime"/> (10 s by default). Where one address stands for
/// many replicas (a Compose service name, a Kubernetes Service), a connection reaches one replica for as long as
/// it lives; YARP's default keeps it forever, so the replicas that started last would never see a request.
/// </summary>
internal sealed class RotatingConnectionsHttpClientFactory(IOptions<HttpClientOptions> options) : ForwarderHttpClientFactory
{
    private readonly TimeSpan _lifetime = options.Value.PooledConnectionLifetime;

    protected override void ConfigureHandler(ForwarderHttpClientContext context, SocketsHttpHandler handler)
    {
        base.ConfigureHandler(context, handler);
        handler.PooledConnectionLifetime = _lifetime;
    }
}
