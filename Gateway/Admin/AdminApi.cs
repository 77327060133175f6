using Gateway.Admin;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;

namespace Gateway.Admin;

public static class AdminApi
{
    /// <summary>
    /// <c>/admin/flags</c>: list and change the pitfall flags of the running system. Mapped only when an
    /// admin key (<c>Admin:Key</c>) and a flags store (Redis, <c>ConnectionStrings:flags</c>, or a flags file,
    /// <c>FeatureFlags:File</c>) are configured. While the store cannot be read or written (Redis out of reach,
    /// a flags file that does not parse) every route answers a 503 problem and changes nothing.
    /// </summary>
    public static IEndpointRouteBuilder MapAdminApi(this IEndpointRouteBuilder app)
    {
        if (!app.ServiceProvider.GetRequiredService<AdminKey>().IsConfigured || app.ServiceProvider.GetService<IFlagStore>() is null)
        {
            return app;
        }

        var admin = app.MapGroup("/admin/flags").WithTags("Admin").AddEndpointFilter(RequireAdminKey).AddEndpointFilter(StoreUnavailable);

        admin.MapGet("/", ListFlags)
            .WithSummary("Every flag: its variant in the flags file and the variant its service serves now.");
        admin.MapPut("/{name}", SetFlag)
            .WithSummary("Sets one flag; the body is one of its variants as a JSON string, e.g. \"naive\" or, where the pitfall has it, \"streaming\".");
        admin.MapPut("/", SetAllFlags)
            .WithSummary("Sets every flag to one variant (a flag without it gets optimized); the body is the variant as a JSON string.");

        return app;
    }

    public static async Task<Ok<IReadOnlyList<FlagState>>> ListFlags(FlagsAdmin admin, RequestVariants variants, CancellationToken cancellationToken) =>
        TypedResults.Ok(await admin.ListAsync(variants.Resolved, cancellationToken));

    public static async Task<Results<NoContent, ProblemHttpResult>> SetFlag(
        string name, [FromBody] string? variant, HttpContext context, FlagsAdmin admin, CancellationToken cancellationToken)
    {
        if (Pitfalls.Find(name) is not { } pitfall)
        {
            return BadRequest($"Unknown flag '{name}'.", $"Known flags: {string.Join(", ", Pitfalls.All.Select(p => p.Flag))}.");
        }

        if (variant is null || !pitfall.Has(variant))
        {
            return BadRequest($"Unknown variant '{variant}' for {name}.", $"Use {PerfMode.Choices(pitfall.Variants.Select(v => v.Name), "\"")}.");
        }

        await admin.SetAsync(new Dictionary<string, string> { [name] = variant! }, Source(context), KeyId(context), ClientAddress(context), cancellationToken);
        return TypedResults.NoContent();
    }

    public static async Task<Results<NoContent, ProblemHttpResult>> SetAllFlags(
        [FromBody] string? variant, HttpContext context, FlagsAdmin admin, CancellationToken cancellationToken)
    {
        if (!PerfMode.IsValid(variant))
        {
            return BadRequest($"Unknown variant '{variant}'.", $"Use {PerfMode.Choices(PerfMode.All, "\"")}.");
        }

        // "Every flag streaming": the pitfalls without that rung go to their best one, as X-Perf-Mode does.
        await admin.SetAsync(Pitfalls.All.ToDictionary(p => p.Flag, p => p.Serving(variant!)), Source(context), KeyId(context), ClientAddress(context), cancellationToken);
        return TypedResults.NoContent();
    }

    private static async ValueTask<object?> RequireAdminKey(EndpointFilterInvocationContext invocation, EndpointFilterDelegate next)
    {
        var context = invocation.HttpContext;
        if (!context.RequestServices.GetRequiredService<AdminKey>().Matches(context.Request.Headers[AdminKey.Header]))
        {
            context.Response.Headers.WWWAuthenticate = AdminKey.Header;
            return TypedResults.Problem(statusCode: StatusCodes.Status401Unauthorized, title: $"A valid {AdminKey.Header} header is required.");
        }

        return await next(invocation);
    }

    private static async ValueTask<object?> StoreUnavailable(EndpointFilterInvocationContext invocation, EndpointFilterDelegate next)
    {
        try
        {
            return await next(invocation);
        }
        catch (FlagStoreUnavailableException unavailable)
        {
            invocation.HttpContext.Response.Headers.RetryAfter = "5";
            return TypedResults.Problem(statusCode: StatusCodes.Status503ServiceUnavailable, title: "The flags cannot be read or changed now.", detail: unavailable.Message);
        }
    }

    private static string KeyId(HttpContext context) => AdminKey.IdOf(context.Request.Headers[AdminKey.Header]!);

    private static string Source(HttpContext context) => FlagAudit.SourceOf(context.Request.Headers[FlagAudit.ClientHeader]);

    /// <summary>The address of whoever connected: the Gateway is the edge, so no forwarded header is trusted.</summary>
    private static string? ClientAddress(HttpContext context) => context.Connection.RemoteIpAddress?.ToString();

    private static ProblemHttpResult BadRequest(string title, string detail) =>
        TypedResults.Problem(statusCode: StatusCodes.Status400BadRequest, title: title, detail: detail);
}
