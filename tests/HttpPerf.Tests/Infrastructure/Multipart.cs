using System.Text;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Hand-built multipart bodies, including the broken ones a real client library would refuse to send.</summary>
public static class Multipart
{
    public const string Boundary = "----httpperf-test-boundary";

    public sealed record Part(string? FileName, string ContentType, byte[] Data, string Name = "file");

    public static byte[] Body(IEnumerable<Part> parts, bool closed = true)
    {
        using var body = new MemoryStream();
        foreach (var part in parts)
        {
            var fileName = part.FileName is null ? "" : $"; filename=\"{part.FileName}\"";
            Write(body, $"--{Boundary}\r\nContent-Disposition: form-data; name=\"{part.Name}\"{fileName}\r\nContent-Type: {part.ContentType}\r\n\r\n");
            body.Write(part.Data);
            Write(body, "\r\n");
        }

        if (closed)
        {
            Write(body, $"--{Boundary}--\r\n");
        }

        return body.ToArray();
    }

    public static ByteArrayContent Content(byte[] body, string contentType = $"multipart/form-data; boundary={Boundary}")
    {
        var content = new ByteArrayContent(body);
        content.Headers.TryAddWithoutValidation("Content-Type", contentType);
        return content;
    }

    private static void Write(Stream stream, string text) => stream.Write(Encoding.ASCII.GetBytes(text));

    /// <summary>
    /// A client that leaves mid-upload: over a raw socket, announces three times the bytes of
    /// <paramref name="head"/>, sends <paramref name="head"/>, then closes the connection.
    /// </summary>
    public static async Task SendAndLeaveAsync(Uri gateway, byte[] head, string mode, TimeSpan linger = default)
    {
        var cancel = TestContext.Current.CancellationToken;
        using var client = new System.Net.Sockets.TcpClient();
        await client.ConnectAsync(gateway.Host, gateway.Port, cancel);
        await using var stream = client.GetStream();
        var headers = $"POST /api/uploads HTTP/1.1\r\nHost: {gateway.Authority}\r\n{Http.ModeHeader}: {mode}\r\n" +
                      $"Content-Type: multipart/form-data; boundary={Boundary}\r\nContent-Length: {head.Length * 3}\r\n\r\n";
        await stream.WriteAsync(System.Text.Encoding.ASCII.GetBytes(headers), cancel);
        await stream.WriteAsync(head, cancel);
        await stream.FlushAsync(cancel);
        await Task.Delay(linger, cancel);
    }
}
