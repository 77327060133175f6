namespace Uploads.Api.Storage;

/// <summary>
/// One upload's share of the quota: every chunk is reserved before it is written, in leases of up to
/// <see cref="IQuotaLedger.LeaseBytes"/> (one Redis call per 8 MiB rather than per 128 KB chunk). Committing turns
/// the bytes written into stored bytes and gives the rest of the lease back; releasing gives it all back.
/// </summary>
public sealed class QuotaReservation(StorageQuota quota, IQuotaLedger ledger, string directory)
{
    private long _written;
    private long _reserved;

    internal async ValueTask AddAsync(int bytes)
    {
        quota.CheckDisk(bytes, _written, directory);
        if (_written + bytes > _reserved)
        {
            var needed = _written + bytes - _reserved;
            _reserved += await quota.ReserveAsync(needed, Math.Max(needed, ledger.LeaseBytes));
        }

        _written += bytes;
    }

    internal async Task CommitAsync()
    {
        await ledger.CommitAsync(_written, _reserved);
        _reserved = 0;
    }

    internal async Task ReleaseAsync()
    {
        if (_reserved > 0)
        {
            await ledger.ReleaseAsync(_reserved);
            _reserved = 0;
        }
    }
}
