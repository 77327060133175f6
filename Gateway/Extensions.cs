using Gateway;
using Yarp.ReverseProxy.ServiceDiscovery;

namespace Microsoft.Extensions.Hosting;

public static class GatewayServiceExtensions
{
    public static IHostApplicationBuilder AddGatewayServices(this IHostApplicationBuilder builder)
    {
        // Routes and clusters live in appsettings.json ("ReverseProxy"); cluster addresses such as
        // http://catalog are resolved by service discovery.
        builder.Services.AddReverseProxy()
            .LoadFromConfig(builder.Configuration.GetSection("ReverseProxy"));
        builder.Services.AddSingleton<IDestinationResolver, ServiceDiscoveryDestinationResolver>();
        return builder;
    }
}
