using System.Net.Http;
using Yarp.ReverseProxy.Forwarder;

namespace Gateway.Replicas;

/// <summary>
/// YARP's forwarding client, with pooled connections retired after
/// <see cref="Microsoft.Extensions.Hosting.Extensions.PooledConnectionLifetime"/> (10 s by default). Where one address stands for
/// many replicas (a Compose service name, a Kubernetes Service), a connection reaches one replica for as long as
/// it lives; YARP's default keeps it forever, so the replicas that started last would never see a request.
/// </summary>
internal sealed class RotatingConnectionsHttpClientFactory(IConfiguration configuration) : ForwarderHttpClientFactory
{
    private readonly TimeSpan _lifetime = Microsoft.Extensions.Hosting.Extensions.PooledConnectionLifetime(configuration);

    protected override void ConfigureHandler(ForwarderHttpClientContext context, SocketsHttpHandler handler)
    {
        base.ConfigureHandler(context, handler);
        handler.PooledConnectionLifetime = _lifetime;
    }
}
