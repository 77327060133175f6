namespace HttpPerf.ServiceDefaults.Contract;

/// <param name="Name">The resource name: the dashboard's, service discovery's (<c>http://catalog</c>) and <c>OTEL_SERVICE_NAME</c>.</param>
/// <param name="Project">The project folder and assembly name.</param>
/// <param name="Calls">The services it calls, by name.</param>
public sealed record ServiceSpec(string Name, string Project, IReadOnlyList<string> Calls);
