using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.ServiceDefaults;

namespace LoadGen.Load;

/// <summary>
/// One request as both runners send it: headers first, then the body drained with the caller's buffer, inside a span
/// of LoadGen's own (<see cref="ActivitySourceName"/>) named for the scenario and route, <c>products GET /api/products</c>.
/// That span lasts until the last body byte is read, so a trace lasts as long as the request did. The HttpClient span
/// under it is the platform's and ends when the headers arrive: on a streamed product list it covered 0.36 s of a
/// request the Gateway served for 0.66 s, and was LoadGen's only span, named <c>GET</c>.
/// </summary>
public static class Exchange
{
    public const string ActivitySourceName = "LoadGen";

    private static readonly ActivitySource Source = new(ActivitySourceName);

    private static readonly HttpRequestOptionsKey<string> OperationKey = new("loadgen.operation");
    private static readonly HttpRequestOptionsKey<string> RouteKey = new("loadgen.route");

    private static readonly HttpRequestOptionsKey<(string Prefix, string Route)> DeleteCreatedKey = new("loadgen.delete-created");

    /// <summary>
    /// What came back: body bytes, when the headers arrived (0 if they never did), success, the <c>X-Perf-Variants</c>
    /// that served it, when the last body byte was read (0: when recorded), and, for a failure, what it was: the status
    /// and a problem body's title (<c>503 Out of memory</c>), or what happened to the exchange (<c>cut mid-body</c>).
    /// </summary>
    public readonly record struct Outcome(long Bytes, long HeadersTimestamp, bool Ok, string Variants = "", long EndTimestamp = 0, string? Failure = null);

    /// <summary>
    /// What a 201 of <paramref name="request"/> creates is deleted once its response is read (<c>DELETE</c> of its
    /// <c>Location</c> under <paramref name="prefix"/>), outside its timing and span, in a span of its own named
    /// <paramref name="route"/>: load that uploads leaves no upload.
    /// </summary>
    public static HttpRequestMessage DeletesWhatItCreates(this HttpRequestMessage request, string prefix, string route)
    {
        request.Options.Set(DeleteCreatedKey, (prefix, route));
        return request;
    }

    /// <summary>
    /// A span of LoadGen's own, <c>{method} {route}</c>, around a call outside any scenario's figures (storing the
    /// download's file, deleting what an upload created), so that every trace LoadGen
    /// starts is named by its route, not by the method alone as HttpClient's span is. Null when nobody listens.
    /// </summary>
    public static Activity? StartSpan(HttpMethod method, string route)
    {
        var span = Source.StartActivity($"{method} {route}");
        span?.SetTag("http.request.method", method.Method);
        span?.SetTag("url.template", route);
        return span;
    }

    /// <summary>Names the span of <paramref name="request"/>: the scenario (null for a bare path) and the route, with <c>{id}</c> where the path varies.</summary>
    public static HttpRequestMessage Named(this HttpRequestMessage request, string? scenario, string route)
    {
        request.Options.Set(RouteKey, route);
        request.Options.Set(OperationKey, scenario is null ? $"{request.Method} {route}" : $"{scenario} {request.Method} {route}");
        return request;
    }

    /// <summary>The route <see cref="Named"/> gave the request, else its path.</summary>
    public static string RouteOf(HttpRequestMessage request) =>
        request.Options.TryGetValue(RouteKey, out var route) ? route : request.RequestUri?.OriginalString ?? "";

    public static async Task<Outcome> SendAsync(HttpClient client, HttpRequestMessage request, byte[] buffer, CancellationToken cancellationToken)
    {
        var deletes = request.Options.TryGetValue(DeleteCreatedKey, out var delete);
        var (outcome, created) = await SendAndReadAsync(client, request, buffer, cancellationToken);
        if (deletes && created is not null)
        {
            try
            {
                using var span = StartSpan(HttpMethod.Delete, delete.Route);
                using var deleted = await client.DeleteAsync($"{delete.Prefix}{created.OriginalString}", cancellationToken);
            }
            catch (Exception exception) when (exception is HttpRequestException or TaskCanceledException && !cancellationToken.IsCancellationRequested)
            {
                // Best effort: the upload stays, and counts against the quota, as any upload would.
            }
        }

        return outcome;
    }

    private static async Task<(Outcome Outcome, Uri? Created)> SendAndReadAsync(HttpClient client, HttpRequestMessage request, byte[] buffer, CancellationToken cancellationToken)
    {
        using var span = StartSpan(request);
        long bytes = 0;
        long headers = 0;
        try
        {
            using (request)
            using (var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken))
            {
                headers = Stopwatch.GetTimestamp();
                string? failure = null;
                if (!response.IsSuccessStatusCode && response.Content.Headers.ContentType?.MediaType == "application/problem+json")
                {
                    // A refusal says why in its problem body's title, small enough to read whole.
                    var problem = await response.Content.ReadAsByteArrayAsync(cancellationToken);
                    bytes = problem.Length;
                    failure = $"{(int)response.StatusCode} {TitleOf(problem)}".TrimEnd();
                }
                else
                {
                    await using var body = await response.Content.ReadAsStreamAsync(cancellationToken);
                    int read;
                    while ((read = await body.ReadAsync(buffer, cancellationToken)) > 0)
                    {
                        bytes += read;
                    }
                }

                if (!response.IsSuccessStatusCode)
                {
                    failure ??= ((int)response.StatusCode).ToString(System.Globalization.CultureInfo.InvariantCulture);
                }

                var variants = response.Headers.TryGetValues(PerfMode.VariantsHeader, out var values) ? string.Join(", ", values) : "";
                var outcome = new Outcome(bytes, headers, response.IsSuccessStatusCode, variants, Stopwatch.GetTimestamp(), failure);
                End(span, outcome, (int)response.StatusCode);
                return (outcome, response.StatusCode == System.Net.HttpStatusCode.Created ? response.Headers.Location : null);
            }
        }
        catch (Exception exception) when (exception is HttpRequestException or IOException or TaskCanceledException && !cancellationToken.IsCancellationRequested)
        {
            // A refused connection, a cut body or a client time-out: an error to count, not a reason to stop.
            span?.SetStatus(ActivityStatusCode.Error, exception.Message);
            span?.SetTag("error.type", exception.GetType().FullName);
            var failure = exception switch
            {
                TaskCanceledException => "timed out",
                HttpRequestException { HttpRequestError: var error } when headers == 0 => $"no answer ({error})",
                _ => "cut mid-body",
            };
            return (new Outcome(bytes, headers, Ok: false, EndTimestamp: Stopwatch.GetTimestamp(), Failure: failure), null);
        }
    }

    private static string? TitleOf(byte[] problem)
    {
        try
        {
            using var document = System.Text.Json.JsonDocument.Parse(problem);
            return document.RootElement.TryGetProperty("title", out var title) ? title.GetString() : null;
        }
        catch (System.Text.Json.JsonException)
        {
            return null;
        }
    }

    private static Activity? StartSpan(HttpRequestMessage request)
    {
        if (!Source.HasListeners())
        {
            return null;
        }

        var span = StartSpan(request.Method, RouteOf(request));
        if (request.Options.TryGetValue(OperationKey, out var operation))
        {
            span?.DisplayName = operation;
        }

        if (request.Headers.TryGetValues(PerfMode.RequestHeader, out var mode))
        {
            span?.SetTag("loadgen.requested_mode", string.Join(", ", mode));
        }

        return span;
    }

    private static void End(Activity? span, Outcome outcome, int status)
    {
        if (span is null)
        {
            return;
        }

        span.SetTag("http.response.status_code", status);
        span.SetTag("http.response.body.size", outcome.Bytes);
        if (outcome.Variants.Length > 0)
        {
            span.SetTag(PerfTelemetry.VariantsTag, outcome.Variants);
            span.SetTag(PerfTelemetry.ModeTag, PerfMode.Summarize(outcome.Variants));
        }

        if (!outcome.Ok)
        {
            span.SetStatus(ActivityStatusCode.Error);
        }
    }
}
