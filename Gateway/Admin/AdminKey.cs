using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Options;

namespace Gateway.Admin;

/// <summary>
/// The admin key (<see cref="AdminOptions.Key"/>). Presented keys are compared in constant time, on
/// their SHA-256 so lengths leak nothing either; logs name a key by a short id of its hash, never the key.
/// </summary>
public sealed class AdminKey(IOptions<AdminOptions> options)
{
    public const string Header = HttpPerf.ServiceDefaults.Contract.SystemContract.AdminKeyHeader;

    private readonly byte[]? _hash = options.Value.Key is { Length: > 0 } key ? Hash(key) : null;

    /// <summary>No key configured: the admin routes are not mapped at all.</summary>
    public bool IsConfigured => _hash is not null;

    public bool Matches(string? presented) =>
        _hash is not null && presented is { Length: > 0 } && CryptographicOperations.FixedTimeEquals(_hash, Hash(presented));

    public static string IdOf(string presented) => Convert.ToHexStringLower(Hash(presented))[..8];

    private static byte[] Hash(string key) => SHA256.HashData(Encoding.UTF8.GetBytes(key));
}
