using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Discovery;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Selection;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.ServiceDefaults;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Http.Resilience;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using OpenTelemetry.Metrics;
using OpenTelemetry.Trace;
using OpenTelemetry;

namespace HttpPerf.ServiceDefaults;

/// <summary>
/// What every service shares: telemetry, health, service discovery, resilience, pitfall flags and
/// problem responses. A service calls <see cref="AddServiceDefaults"/> and <see cref="UseServiceDefaults"/>.
/// </summary>
public static class ServiceDefaultsExtensions
{
    public const string OpenApiPath = "/openapi/{documentName}.json";

    public static TBuilder AddServiceDefaults<TBuilder>(this TBuilder builder) where TBuilder : IHostApplicationBuilder
    {
        // Secrets a swarm (or Compose) gives as files, one a setting, named as its variable would be
        // (/run/secrets/Admin__Key): never in an environment listing. Absent elsewhere.
        builder.Configuration.AddKeyPerFile(SystemContract.SecretsDirectory, optional: true);
        builder.ConfigureOpenTelemetry();
        builder.AddDefaultHealthChecks();
        builder.AddPerfFlags();
        builder.Services.AddProblemDetails();
        builder.Services.AddExceptionHandler<OutOfMemoryHandler>();
        builder.Services.AddExceptionHandler<DependencyUnavailableHandler>();
        builder.Services.AddOpenApi();
        builder.Services.AddOptions<HttpClientOptions>().BindConfiguration(HttpClientOptions.Section)
            .Validate(
                o => o.PooledConnectionLifetime > TimeSpan.Zero || o.PooledConnectionLifetime == Timeout.InfiniteTimeSpan,
                "HttpClients:PooledConnectionLifetime must be positive, or -00:00:00.001 for connections that live forever (the handler's own default): zero would open a connection per call.")
            .Validate(o => o.ConnectTimeout > TimeSpan.Zero, "HttpClients:ConnectTimeout must be positive.")
            .ValidateOnStart();
        ShutdownDelay.AddTo(builder.Services);
        HttpLimits.AddTo(builder.Services);
        MemoryBudget.AddTo(builder.Services);
        Http2Listener.AddTo(builder);

        builder.Services.AddServiceDiscovery();
        // After the configuration provider: a name that stands for every replica (a swarm's tasks.catalog) becomes each one's address.
        ReplicaAddresses.AddTo(builder.Services);
        builder.Services.ConfigureHttpClientDefaults(http =>
        {
            http.UseSocketsHttpHandler((handler, services) => services.GetRequiredService<IOptions<HttpClientOptions>>().Value.Configure(handler));
            http.AddStandardResilienceHandler(ConfigureForLargeBodies);
            http.AddServiceDiscovery();
            http.AddDownstreamVariants();
        });

        return builder;
    }

    /// <summary>
    /// The standard handler's 10 s attempt timeout is too short for a naive 25 MB call under load (the naive Catalog
    /// only sends headers after it has serialized the whole body to a temp file: 4.4 s p50 at 16 in flight); 20 s
    /// leaves room for that, and bounds what a frozen replica (its connection open and silent) costs a call before
    /// the retry takes the next replica (ContainerModeTests.Faults.cs; the Gateway's activity timeouts sit above it). Retries
    /// stay off for POST/PUT/PATCH/DELETE so an upload is never sent twice. A connection that could not even be
    /// made (a replica gone: its connection refused, or its name no longer resolved, as a removed container's) is
    /// retried at once, since service discovery hands the retry the next replica, then after 1 s and 2 s (the standard
    /// 2 s and 4 s kept every client waiting past a restarted replica); a dependency with no replica left sees 3
    /// attempts in 3 s per call. The circuit breaker counts the whole client, not one replica, so it does not count a
    /// replica that cannot be reached or timed out: one killed Catalog container of two had it open for every call,
    /// each product list a 502 for 5 s at a time (ContainerModeTests.Faults.cs), while the retry alone reaches the other replica.
    /// </summary>
    private static void ConfigureForLargeBodies(HttpStandardResilienceOptions options)
    {
        options.Retry.DelayGenerator = args => ValueTask.FromResult<TimeSpan?>(
            Unreachable(args.Outcome.Exception) ? TimeSpan.FromSeconds(args.AttemptNumber) : null);
        var breaks = options.CircuitBreaker.ShouldHandle;
        options.CircuitBreaker.ShouldHandle = args => ReplicaFault(args.Outcome.Exception) ? ValueTask.FromResult(false) : breaks(args);
        options.AttemptTimeout.Timeout = TimeSpan.FromSeconds(20);
        options.TotalRequestTimeout.Timeout = TimeSpan.FromSeconds(120);
        options.CircuitBreaker.SamplingDuration = TimeSpan.FromSeconds(120);
        options.Retry.DisableForUnsafeHttpMethods();
    }

    // A replica that cannot be reached (refused, unresolved) or stayed silent for a whole attempt (frozen, cut off):
    // the retry's business, on the next replica, not the circuit breaker's.
    private static bool Unreachable(Exception? failure) =>
        failure is HttpRequestException { HttpRequestError: HttpRequestError.ConnectionError or HttpRequestError.NameResolutionError };

    private static bool ReplicaFault(Exception? failure) => Unreachable(failure) || failure is Polly.Timeout.TimeoutRejectedException;

    public static TBuilder ConfigureOpenTelemetry<TBuilder>(this TBuilder builder) where TBuilder : IHostApplicationBuilder
    {
        builder.Logging.AddOpenTelemetry(logging =>
        {
            logging.IncludeFormattedMessage = true;
            logging.IncludeScopes = true;
        });

        // Each HttpClient call wrote four Information lines and its resilience pipeline two more: with the exporter's
        // Polly lines, 58 lines in Frontend.Api for 4 product lists, none a person needs, since the trace shows every
        // call with its timing. Failures stay visible: retries, timeouts and broken circuits are Warning or above.
        builder.Logging.AddFilter("System.Net.Http.HttpClient", LogLevel.Warning);
        builder.Logging.AddFilter("Polly", LogLevel.Warning);

        MemoryLimit.AddGauges();
        builder.Services.AddOpenTelemetry()
            .WithMetrics(metrics =>
            {
                metrics
                    .AddAspNetCoreInstrumentation()
                    .AddHttpClientInstrumentation()
                    .AddRuntimeInstrumentation()
                    .AddMeter(PerfTelemetry.MeterName);
                foreach (var histogram in PerfTelemetry.DurationHistograms)
                {
                    metrics.AddView(histogram, new ExplicitBucketHistogramConfiguration { Boundaries = PerfTelemetry.DurationBuckets });
                }
            })
            .WithTracing(tracing => tracing
                .SetSampler(new ProbeSampler())
                // "Grpc.Net.Client": a gRPC call's own span (grpc.method, grpc.status_code), the parent of its HTTP/2 requests (Frontend.Grpc).
                .AddSource(builder.Environment.ApplicationName, PerfTelemetry.ActivitySourceName, "Yarp.ReverseProxy", "Grpc.Net.Client")
                .AddAspNetCoreInstrumentation(options => options.Filter = context => !IsProbe(context.Request.Path))
                .AddHttpClientInstrumentation());

        // Export only when a collector is configured (the AppHost sets it; tests and bare runs do not).
        if (!string.IsNullOrWhiteSpace(builder.Configuration["OTEL_EXPORTER_OTLP_ENDPOINT"]))
        {
            builder.Services.AddOpenTelemetry().UseOtlpExporter();

            // The exporter's own HttpClients come from the factory too, so ConfigureHttpClientDefaults gave them the
            // resilience handler: two Polly lines per export (the attempt, the pipeline), 40 in 5 idle seconds across
            // the four services. The exporter has its own timeout (10 s); a collector that is down should cost
            // dropped telemetry, not retries and log lines about telemetry.
            foreach (var exporterClient in OtlpExporterClients)
            {
                // Experimental since Microsoft.Extensions.Http.Resilience 8.x, and the one way to undo a default handler for one client.
#pragma warning disable EXTEXP0001
                builder.Services.AddHttpClient(exporterClient).RemoveAllResilienceHandlers();
#pragma warning restore EXTEXP0001
            }
        }

        return builder;
    }

    /// <summary>The named HttpClients the OTLP exporter asks IHttpClientFactory for, one per signal.</summary>
    private static readonly string[] OtlpExporterClients = ["OtlpTraceExporter", "OtlpMetricExporter", "OtlpLogExporter"];

    public static TBuilder AddDefaultHealthChecks<TBuilder>(this TBuilder builder) where TBuilder : IHostApplicationBuilder
    {
        builder.Services.AddHealthChecks()
            .AddCheck("self", () => HealthCheckResult.Healthy(), ["live"]);
        return builder;
    }

    /// <summary>
    /// The middleware every service runs, then the health endpoints: problem responses for exceptions
    /// (a failed downstream call is a 502, one refused for now a 503 with Retry-After), and the per-request pitfall variants.
    /// </summary>
    public static WebApplication UseServiceDefaults(this WebApplication app)
    {
        RuntimeCounters.UseActiveRequestCount(app);
        app.UseExceptionHandler(new ExceptionHandlerOptions { StatusCodeSelector = StatusCodeFor });
        app.UseStatusCodePages();
        app.UsePerfVariants();

        // Mapped in every environment: the AppHost, the tests and LoadGen all wait on them. Probes are not
        // requests anyone made: kept out of the request metrics here, and out of traces by IsProbe.
        app.MapHealthChecks(SystemContract.HealthPath).DisableHttpMetrics();
        app.MapHealthChecks(SystemContract.AlivePath, new HealthCheckOptions { Predicate = r => r.Tags.Contains("live") }).DisableHttpMetrics();

        // What this running service serves right now, flag by flag: how the admin page sees a change land.
        app.MapGet(SystemContract.FlagsPath, (RequestVariants variants) => TypedResults.Ok(variants.Resolved))
            .WithTags("Flags")
            .WithSummary("The variant each pitfall flag of this service resolves to now.");

        // The service's routes as an OpenAPI document: /openapi/v1.json.
        app.MapOpenApi(OpenApiPath);

        // Counters a benchmark reads before and after a run to charge allocations and CPU to each service.
        // Not routed by the Gateway; only callers that reach the service itself see it.
        app.MapGet(SystemContract.RuntimePath, () => TypedResults.Ok(RuntimeCounters.Read()))
            .DisableHttpMetrics()
            .WithTags("Diagnostics")
            .WithSummary("Bytes allocated, GC counts, CPU time and working set of this process so far, and the requests in its pipeline now.");
        return app;
    }

    private static int StatusCodeFor(Exception exception)
    {
        if (exception is BadHttpRequestException bad)
        {
            return bad.StatusCode;
        }

        // A dependency that could not be reached or did not answer in time, however a client library wraps it.
        for (Exception? e = exception; e is not null; e = e.InnerException)
        {
            if (e is HttpRequestException or Polly.Timeout.TimeoutRejectedException or Polly.CircuitBreaker.BrokenCircuitException)
            {
                return StatusCodes.Status502BadGateway;
            }
        }

        return StatusCodes.Status500InternalServerError;
    }

    private static bool IsProbe(PathString path) =>
        path.StartsWithSegments(SystemContract.HealthPath) || path.StartsWithSegments(SystemContract.AlivePath) || path.StartsWithSegments(SystemContract.RuntimePath) || path.StartsWithSegments(SystemContract.StatusPath);
}
