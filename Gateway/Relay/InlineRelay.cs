using HttpPerf.ServiceDefaults.Contract;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;

namespace Gateway.Relay;

/// <summary>
/// A relayed body arrives in pieces, and for each piece the Gateway's work is small: copy it from the upstream socket
/// to the client's. By default each step of that crosses threads: the thread polling the sockets (epoll) queues the
/// read's completion to the thread pool, and Kestrel queues the write to the socket to its own I/O queue. On a relay the
/// thread switches cost more than the copies (the Gateway's profile: docs/results/profile/). With the runtime's switch
/// set (<see cref="SystemContract.InlineSocketCompletions"/>, by the AppHost), socket completions run on the polling
/// thread, and this turns on Kestrel's counterpart, so one thread reads a piece, copies it and sends it.
/// "Unsafe" because nothing on that thread may block: the Gateway's code is asynchronous throughout; a service
/// doing real work per request should leave both off.
/// Its page: docs/pitfalls/Gateway.Buffering.md.
/// </summary>
public static class InlineRelay
{
    public static bool Enabled => Environment.GetEnvironmentVariable(SystemContract.InlineSocketCompletions) == "1";

    public static IServiceCollection AddInlineRelay(this IServiceCollection services) =>
        services.Configure<SocketTransportOptions>(options => options.UnsafePreferInlineScheduling = Enabled);
}
