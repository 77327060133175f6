using Frontend.Api.CatalogClient;
using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api.Replicas;

/// <summary>
/// Pitfall <c>Frontend.Replicas</c>: how Frontend.Api spreads its Catalog calls over the Catalog's replicas, and what
/// one slow or stuck replica then costs a product list. Every rung sends the same request and returns the same
/// response; they differ in which replica each attempt goes to and when a second attempt starts.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public interface ICatalogReplicas : ICatalogApi
{
    public const string Flag = Pitfalls.FrontendReplicas;
}
