using LoadGen.Load;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Hosting;

namespace LoadGen.Control;

/// <summary>
/// While an open-model run goes on: <c>GET /rate</c> and <c>PUT /rate</c> (body: arrivals per second as a
/// JSON number) change the rate live, and <c>GET /mode</c> and <c>PUT /mode</c> (body: <c>"flags"</c>,
/// <c>"both"</c>, <c>"naive"</c> or <c>"optimized"</c>) switch between following the flags file and A/B, from
/// the dashboard's commands or curl. The service defaults export LoadGen's metrics like any service's.
/// </summary>
public static class LoadControlHost
{
    public const double MaxRate = 10_000;

    public static async Task<WebApplication> StartAsync(RateControl rate, ModeControl modes, string url, IReadOnlyDictionary<string, string?>? configuration = null, CancellationToken cancellationToken = default)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls(url);
        if (configuration is not null)
        {
            builder.Configuration.AddInMemoryCollection(configuration);
        }

        builder.AddServiceDefaults();
        var app = builder.Build();
        app.UseServiceDefaults();
        app.MapGet("/rate", () => TypedResults.Ok(rate.PerSecond)).WithSummary("The target arrival rate, per second.");
        app.MapPut("/rate", SetRate).WithSummary("Changes the target arrival rate; the body is a JSON number.");
        app.MapGet("/mode", () => TypedResults.Ok(modes.Name)).WithSummary("What the load asks for: flags (follow the flags file), both (A/B by header), naive or optimized.");
        app.MapPut("/mode", SetMode).WithSummary("Switches the load between flags, both, naive and optimized; the body is a JSON string.");
        await app.StartAsync(cancellationToken);
        return app;

        Results<NoContent, ProblemHttpResult> SetRate([FromBody] double perSecond)
        {
            if (perSecond is <= 0 or > MaxRate || double.IsNaN(perSecond))
            {
                return TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, title: $"The rate must be above 0 and at most {MaxRate} per second.");
            }

            rate.PerSecond = perSecond;
            return TypedResults.NoContent();
        }

        Results<NoContent, ProblemHttpResult> SetMode([FromBody] string? mode)
        {
            if (!ModeControl.IsValid(mode))
            {
                return TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, title: $"Unknown mode '{mode}'.", detail: $"Use {string.Join(", ", ModeControl.Choices)}.");
            }

            modes.Set(mode!);
            return TypedResults.NoContent();
        }
    }
}
