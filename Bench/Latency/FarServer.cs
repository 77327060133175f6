using System.Buffers;
using System.Diagnostics;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Bench.Latency;

/// <summary>
/// The far end of seed 003's experiment: plain Kestrel, nothing else, run on the far side of a <see cref="DelayLine"/>.
/// <c>GET /writes?size=&amp;total=&amp;flush=</c> answers <c>total</c> bytes (with a Content-Length, as the seed's
/// HttpListener did) in writes of <c>size</c> bytes, each flushed (a send of its own, as HTTP.sys sends each unbuffered
/// write) or all left in the response pipe until the end; <c>GET /writes/last</c> says how long the last one's writes
/// took, per write, as the seed's "Write Time" column does. <c>POST /sink</c> reads an upload and answers its length.
/// </summary>
public static class FarServer
{
    public const int Port = 5100;

    private static double s_lastWriteMicroseconds;

    public static async Task RunAsync(string address, CancellationToken cancellationToken)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls($"http://{address}:{Port}");
        builder.Logging.SetMinimumLevel(LogLevel.Warning);
        var app = builder.Build();
        app.MapGet("/writes", WriteAsync);
        app.MapGet("/writes/last", () => s_lastWriteMicroseconds);
        app.MapPost("/sink", (Delegate)SinkAsync);
        await app.StartAsync(cancellationToken);
        await app.WaitForShutdownAsync(cancellationToken);
    }

    private static async Task WriteAsync(HttpContext context, int size, int total, bool flush)
    {
        var piece = new byte[size];
        Array.Fill(piece, (byte)'a');
        context.Response.ContentType = "application/octet-stream";
        context.Response.ContentLength = total;
        var writer = context.Response.BodyWriter;
        var writes = 0;
        var started = Stopwatch.GetTimestamp();
        for (var sent = 0; sent < total; sent += size, writes++)
        {
            var length = Math.Min(size, total - sent);
            if (flush)
            {
                // WriteAsync on the PipeWriter writes and flushes: Kestrel hands these bytes to the socket now.
                await writer.WriteAsync(piece.AsMemory(0, length), context.RequestAborted);
            }
            else
            {
                // Into the pipe only: Kestrel sends it all when the handler returns, as HTTP.sys with kernel buffering.
                writer.Write(piece.AsSpan(0, length));
            }
        }

        s_lastWriteMicroseconds = Stopwatch.GetElapsedTime(started).TotalMicroseconds / writes;
    }

    private static async Task<long> SinkAsync(HttpContext context)
    {
        var buffer = new byte[64 * 1024];
        long total = 0;
        int read;
        while ((read = await context.Request.Body.ReadAsync(buffer, context.RequestAborted)) > 0)
        {
            total += read;
        }

        return total;
    }
}
