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
}
