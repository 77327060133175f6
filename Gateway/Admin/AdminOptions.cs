using HttpPerf.ServiceDefaults.Contract;

namespace Gateway.Admin;

/// <summary>The admin routes (configuration section <c>Admin</c>).</summary>
public sealed class AdminOptions
{
    public const string Section = SystemContract.AdminSection;

    /// <summary>The key an admin request presents in <c>X-Admin-Key</c>; none: the admin routes are not mapped (<see cref="AdminKey"/>).</summary>
    public string? Key { get; set; }
}
