using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using LoadGen.Load;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace LoadGen.Control;

/// <summary>What the control endpoint acts on: the live load, its modes, and the Gateway a measurement goes to.</summary>
public sealed record LoadControl(OpenModelRunner Runner, ModeControl Modes, HttpClient Gateway, DownloadFile Download);

/// <summary>
/// While an open-model run goes on, from the dashboard's commands or curl: <c>GET</c>/<c>PUT /rate</c> (arrivals per
/// second, a JSON number) and <c>GET</c>/<c>PUT /mode</c> (<c>"flags"</c>, <c>"both"</c>, <c>"naive"</c> or
/// <c>"optimized"</c>) change the live load; <c>GET /status</c> says what it is doing; <c>POST /measure</c> runs a
/// short A/B beside it and answers a Markdown table. The service defaults export LoadGen's metrics and traces like
/// any service's, its per-request spans (<see cref="Exchange.ActivitySourceName"/>) included.
/// </summary>
public static class LoadControlHost
{
    public const double MaxRate = 10_000;

    public static async Task<WebApplication> StartAsync(LoadControl control, string url, IReadOnlyDictionary<string, string?>? configuration = null, CancellationToken cancellationToken = default)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls(url);
        if (configuration is not null)
        {
            builder.Configuration.AddInMemoryCollection(configuration);
        }

        builder.AddServiceDefaults();
        // As every service's appsettings.json: ASP.NET Core's own Information lines are six a request ("Request
        // starting", "Executing endpoint", ...), and the AppHost's polling of /status every 2 s made 65% of all the
        // structured logs of a demo. The traces show every request (the polling's not: ServiceDefaults drops probes).
        builder.Logging.AddFilter("Microsoft.AspNetCore", LogLevel.Warning);
        builder.Services.AddOpenTelemetry().WithTracing(tracing => tracing.AddSource(Exchange.ActivitySourceName));
        builder.Services.AddSingleton(control);
        builder.Services.AddSingleton(new AbMeasurement(control.Gateway, control.Download));
        var app = builder.Build();
        app.UseServiceDefaults();
        app.MapGet("/rate", () => TypedResults.Ok(control.Runner.Rate.PerSecond)).WithSummary("The target arrival rate, per second.");
        app.MapPut("/rate", SetRate).WithSummary("Changes the target arrival rate; the body is a JSON number.");
        app.MapGet("/mode", () => TypedResults.Ok(control.Modes.Name)).WithSummary("What the load asks for: flags (follow the flags file), both (A/B by header), naive or optimized.");
        app.MapPut("/mode", SetMode).WithSummary("Switches the load between flags, both, naive and optimized; the body is a JSON string.");
        app.MapGet(SystemContract.StatusPath, GetStatus).WithSummary("The live load now: running since when and until when, rate, mode, requests and errors, by scenario too.");
        app.MapPost("/measure", MeasureAsync)
            .WithSummary($"A/B now, beside the live load: naive and optimized alternating by X-Perf-Mode header, one in flight, under {AbMeasurement.HardLimit.TotalSeconds:0} s; answers a Markdown table. ?scenario= one of {string.Join(", ", AbMeasurement.Scenarios)}; none: all.");
        await app.StartAsync(cancellationToken);
        return app;

        Results<NoContent, ProblemHttpResult> SetRate([FromBody] double perSecond)
        {
            if (perSecond is <= 0 or > MaxRate || double.IsNaN(perSecond))
            {
                return TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, title: $"The rate must be above 0 and at most {MaxRate} per second.");
            }

            control.Runner.Rate.PerSecond = perSecond;
            return TypedResults.NoContent();
        }

        Results<NoContent, ProblemHttpResult> SetMode([FromBody] string? mode)
        {
            if (!ModeControl.IsValid(mode))
            {
                return TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, title: $"Unknown mode '{mode}'.", detail: $"Use {string.Join(", ", ModeControl.Choices)}.");
            }

            control.Modes.Set(mode!);
            return TypedResults.NoContent();
        }
    }

    public static Ok<LoadStatus> GetStatus(LoadControl control, AbMeasurement measurement) =>
        TypedResults.Ok(LoadStatus.Of(control.Runner, control.Modes, measurement.IsMeasuring));

    public static async Task<Results<ContentHttpResult, ProblemHttpResult>> MeasureAsync(string? scenario, AbMeasurement measurement, ILoggerFactory loggers, CancellationToken cancellationToken)
    {
        if (scenario is not null && !AbMeasurement.Scenarios.Contains(scenario))
        {
            return TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, title: $"Unknown scenario '{scenario}'.", detail: $"Use {string.Join(", ", AbMeasurement.Scenarios)}, or none for all.");
        }

        if (await measurement.WhyNotHealthyAsync(cancellationToken) is { } unhealthy)
        {
            return TypedResults.Problem(statusCode: StatusCodes.Status503ServiceUnavailable, title: "The Gateway is not healthy, so nothing was measured.", detail: unhealthy);
        }

        var result = await measurement.TryMeasureAsync(scenario is null ? AbMeasurement.Scenarios : [scenario], cancellationToken);
        if (result is null)
        {
            return TypedResults.Problem(statusCode: StatusCodes.Status409Conflict, title: "A measurement is already running.", detail: "Ask again when it has answered.");
        }

        AbMeasurement.Log(loggers.CreateLogger(SystemContract.AuditCategory), result);
        return TypedResults.Text(AbMeasurement.Markdown(result), "text/markdown; charset=utf-8");
    }
}
