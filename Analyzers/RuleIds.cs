namespace HttpPerf.Analyzers;

/// <summary>
/// One id a lesson; the lesson's name is its feature flag, and its page is docs/pitfalls/{flag}.md. Compiled into the rules'
/// assembly and the fixes' alike (internal to each), so the fixes need nothing else of the rules.
/// </summary>
internal static class RuleIds
{
    public const string CatalogClient = "HP0001";
    public const string Serialization = "HP0002";
    public const string WriteStrategy = "HP0003";
    public const string UploadsReader = "HP0004";
    public const string Download = "HP0005";
    public const string Buffering = "HP0006";
    public const string Replicas = "HP0007";
    public const string Grpc = "HP0008";
    public const string Blocking = "HP0009";

    /// <summary>The property a diagnostic carries when its code fix applies: which rewrite, by name.</summary>
    public const string FixKey = "fix";

    /// <summary>HP0001: pass HttpCompletionOption.ResponseHeadersRead (the response is disposed by a using).</summary>
    public const string FixResponseHeadersRead = "ResponseHeadersRead";

    /// <summary>HP0001: ReadAsStringAsync + JsonSerializer.Deserialize become ReadFromJsonAsync.</summary>
    public const string FixReadFromJson = "ReadFromJson";

    /// <summary>HP0009, in an async function: <c>.Result</c> or <c>.GetAwaiter().GetResult()</c> becomes <c>await</c>, <c>ReadAsStream()</c> <c>await ReadAsStreamAsync()</c>.</summary>
    public const string FixAwait = "Await";
}
