using System.Net;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.Tests.Infrastructure;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Polly.CircuitBreaker;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// What a service answers when its dependency refused for now (ServiceDefaults' DependencyUnavailableHandler): the
/// Catalog's own 503, after the resilience handler's retries, or an open circuit, become the Frontend's 503 with
/// <c>Retry-After</c>; a dependency that failed otherwise is left to the 502 every service maps it to (docs/memory.md).
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
public sealed class DependencyUnavailableTests
{
    public static TheoryData<string, int> Refusals => new()
    {
        { "503", 2 },
        { "open circuit", 7 },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task A_dependency_that_refused_for_now_is_a_503_with_Retry_After(string refusal, int retryAfter)
    {
        Exception failure = refusal == "503"
            ? new HttpRequestException("Catalog answered 503.", null, HttpStatusCode.ServiceUnavailable)
            : new BrokenCircuitException(TimeSpan.FromSeconds(6.2));
        var (handled, context, body) = await HandleAsync(new InvalidOperationException("wrapped", failure));

        Assert.True(handled);
        Assert.Equal(503, context.Response.StatusCode);
        Assert.Equal(retryAfter.ToString(System.Globalization.CultureInfo.InvariantCulture), context.Response.Headers.RetryAfter.ToString());
        using var problem = JsonDocument.Parse(body);
        Assert.Equal("Dependency unavailable", problem.RootElement.GetProperty("title").GetString());
        Assert.EndsWith($"Retry after {retryAfter} s.", problem.RootElement.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_dependency_that_failed_otherwise_or_a_response_already_begun_is_left_to_the_502()
    {
        Assert.False((await HandleAsync(new HttpRequestException("Catalog answered 500.", null, HttpStatusCode.InternalServerError))).Handled);
        Assert.False((await HandleAsync(new HttpRequestException(HttpRequestError.ConnectionError, "refused"))).Handled);
        Assert.False((await HandleAsync(new HttpRequestException("Catalog answered 503.", null, HttpStatusCode.ServiceUnavailable), started: true)).Handled);
    }

    private static async Task<(bool Handled, HttpContext Context, byte[] Body)> HandleAsync(Exception failure, bool started = false)
    {
        var services = new ServiceCollection().AddLogging().AddProblemDetails().BuildServiceProvider();
        var context = new DefaultHttpContext { RequestServices = services };
        var body = new MemoryStream();
        context.Response.Body = body;
        if (started)
        {
            context.Features.Set<Microsoft.AspNetCore.Http.Features.IHttpResponseFeature>(new StartedResponse());
        }

        var handler = new DependencyUnavailableHandler(services.GetRequiredService<IProblemDetailsService>(), NullLogger<DependencyUnavailableHandler>.Instance);
        var handled = await handler.TryHandleAsync(context, failure, TestContext.Current.CancellationToken);
        return (handled, context, body.ToArray());
    }

    private sealed class StartedResponse : Microsoft.AspNetCore.Http.Features.HttpResponseFeature
    {
        public override bool HasStarted => true;
    }
}
