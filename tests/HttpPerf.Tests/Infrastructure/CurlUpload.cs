using System.Diagnostics;
using System.Globalization;
using System.Text.Json;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// An upload as curl sends it: a multipart body read from files at a paced rate (<c>--limit-rate</c>), over HTTP/1.1,
/// reading the response while it sends. When an answer arrives before the body is done, curl stops sending and ends
/// the connection, as browsers do; .NET's HttpClient instead sends the whole HTTP/1.1 body before it reads.
/// </summary>
public static class CurlUpload
{
    public sealed record Answer(int Status, string ProblemTitle, string ContentType, TimeSpan Elapsed, long BytesSent, int ExitCode, string Errors);

    /// <summary>One part: a file on disk and its declared type.</summary>
    public sealed record Part(string Path, string ContentType);

    public static async Task<Answer> PostAsync(Uri url, IEnumerable<Part> parts, int bytesPerSecond, CancellationToken cancellationToken)
    {
        var start = new ProcessStartInfo("curl") { RedirectStandardOutput = true, RedirectStandardError = true };
        var body = Path.GetTempFileName();
        foreach (var argument in new[] { "-sS", "-o", body, "-w", "%{http_code} %{size_upload} %{content_type}", "--limit-rate", bytesPerSecond.ToString(CultureInfo.InvariantCulture) })
        {
            start.ArgumentList.Add(argument);
        }

        var index = 0;
        foreach (var part in parts)
        {
            start.ArgumentList.Add("-F");
            start.ArgumentList.Add($"part{index++}=@{part.Path};type={part.ContentType}");
        }

        start.ArgumentList.Add(url.ToString());
        try
        {
            var clock = Stopwatch.StartNew();
            using var process = Process.Start(start)!;
            var output = process.StandardOutput.ReadToEndAsync(cancellationToken);
            var errors = process.StandardError.ReadToEndAsync(cancellationToken);
            await process.WaitForExitAsync(cancellationToken);
            var elapsed = clock.Elapsed;
            var fields = (await output).Split(' ', 3);
            var text = await File.ReadAllTextAsync(body, cancellationToken);
            var title = "";
            try
            {
                title = JsonDocument.Parse(text).RootElement.GetProperty("title").GetString() ?? "";
            }
            catch (Exception notProblem) when (notProblem is JsonException or KeyNotFoundException or InvalidOperationException)
            {
                title = text;
            }

            return new(int.Parse(fields[0], CultureInfo.InvariantCulture), title, fields.Length > 2 ? fields[2] : "", elapsed,
                long.Parse(fields[1], CultureInfo.InvariantCulture), process.ExitCode, await errors);
        }
        finally
        {
            File.Delete(body);
        }
    }

    /// <summary>A file of <paramref name="length"/> zero bytes that takes no disk (sparse): the rest of a body no refusal should wait for.</summary>
    public static string SparseFile(string directory, string name, long length)
    {
        var path = Path.Combine(directory, name);
        using var file = new FileStream(path, FileMode.Create, FileAccess.Write);
        file.SetLength(length);
        return path;
    }
}
