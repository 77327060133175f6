using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Uploads.Api.Reader;

/// <summary>
/// Direct I/O (Linux's <c>O_DIRECT</c>), which .NET does not expose: writes go from this process's memory to the
/// disk, not through the page cache. Each write must start at an offset, come from an address and have a length
/// that are multiples of the disk's block size; <see cref="Alignment"/> is one that every disk accepts.
/// </summary>
internal static partial class DirectIo
{
    public const int Alignment = 4096;

    private const int GetFlags = 3; // F_GETFL
    private const int SetFlags = 4; // F_SETFL

    // O_DIRECT's value differs between architectures (asm-generic/fcntl.h against arm's).
    private static readonly int Direct = RuntimeInformation.ProcessArchitecture switch
    {
        Architecture.X64 or Architecture.X86 => 0x4000,
        Architecture.Arm64 or Architecture.Arm => 0x10000,
        _ => 0,
    };

    /// <summary>Turns direct I/O on for <paramref name="file"/>; false where the system or the file system has none (then writes stay buffered).</summary>
    public static bool TryEnable(SafeFileHandle file)
    {
        if (!OperatingSystem.IsLinux() || Direct == 0)
        {
            return false;
        }

        var flags = Fcntl(file, GetFlags, 0);
        return flags >= 0 && Fcntl(file, SetFlags, flags | Direct) == 0;
    }

    [LibraryImport("libc", EntryPoint = "fcntl")]
    private static partial int Fcntl(SafeFileHandle file, int command, int argument);
}
