using System.Net.Http.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Flags set in a local system's flags file, waited for until the service each belongs to serves them.</summary>
public static class ServedFlags
{
    /// <summary>Writes <paramref name="flags"/> and waits (up to 10 s) until the service a flag is named after reports its value.</summary>
    public static async Task SetAsync(LocalSystem system, IReadOnlyDictionary<string, string> flags)
    {
        var cancel = TestContext.Current.CancellationToken;
        await FlagsFile.SetAsync(system.FlagsFile, flags, cancel);
        using var client = new HttpClient();
        Assert.True(await Poll.UntilAsync(async () =>
        {
            foreach (var (flag, value) in flags)
            {
                var served = await client.GetFromJsonAsync<Dictionary<string, string>>(new Uri(Owner(system, flag).BaseAddress, SystemContract.FlagsPath), cancel);
                if (served?.GetValueOrDefault(flag) != value)
                {
                    return false;
                }
            }

            return true;
        }, TimeSpan.FromSeconds(10), TimeSpan.FromMilliseconds(100)), $"the services did not take {string.Join(", ", flags.Select(f => $"{f.Key}={f.Value}"))}");
    }

    private static ServiceProcess Owner(LocalSystem system, string flag) => flag.Split('.')[0] switch
    {
        "Catalog" => system.Catalog,
        "Frontend" => system.Frontend,
        "Uploads" => system.Uploads,
        "Gateway" => system.Gateway,
        _ => throw new ArgumentException($"no service is named in {flag}", nameof(flag)),
    };
}
