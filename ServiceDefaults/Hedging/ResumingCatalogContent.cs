using System.Buffers.Text;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.Extensions.Logging;

namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// The Catalog's product list, read on from another replica when its own stops mid-body: as Frontend.Replicas'
/// optimized rung hands it to every Frontend.CatalogClient rung, and as the Gateway relays <c>/api/catalog/products</c>.
/// The same JSON array, read on. Hedging acts before the headers; this covers the body. The bytes pass through as they
/// arrive, held back only to the end of the last product that has arrived whole (found by the bytes that start the
/// next one: see <c>Scan</c>). When the replica goes silent for
/// longer than <see cref="BodySilence{TOptions}.Bound"/>, or its connection fails, the read asks another replica for the
/// products after that one (<c>GET /catalog/products?after={id}</c>, a keyset read) and splices them on: the rest of
/// the array, its <c>[</c> made the <c>,</c> that follows the last product, or its <c>]</c> alone. The reader above sees
/// one array, byte for byte a whole one's products, so the client's product list is the same.
/// A resume spends a hedge (<see cref="HedgeBudget{TOptions}"/>); with none left, or after
/// <see cref="HedgeOptions.MaxResumes"/>, the read waits for its replica, as the naive rung always does.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class ResumingCatalogContent<TOptions> : WrappedContent
    where TOptions : HedgeOptions
{
    private static readonly Counter<long> Resumes = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.catalog.resumes", "{resume}", "Catalog reads (Frontend.Api's, the Gateway's relays) resumed on another replica after theirs went silent or failed mid-body, by reason.");

    private readonly string _firstReplica;
    private readonly Resume _resume;

    public delegate Task<HttpResponseMessage> Resume(int after, string silentReplica, CancellationToken cancellationToken);

    /// <summary>Wraps <paramref name="first"/>'s content, in its place: read it through this. Its length may change.</summary>
    public ResumingCatalogContent(HttpResponseMessage first, Resume resume, BodySilence<TOptions> silence, HedgeBudget<TOptions> budget, int maxResumes, ILogger logger)
        : base(first.Content, keepsLength: false)
    {
        _firstReplica = Replica(first);
        _resume = resume;
        Silence = silence;
        Budget = budget;
        MaxResumes = maxResumes;
        Logger = logger;
    }

    private BodySilence<TOptions> Silence { get; }

    private HedgeBudget<TOptions> Budget { get; }

    private int MaxResumes { get; }

    private ILogger Logger { get; }

    /// <summary>
    /// Whether its reads hand on everything that has arrived (<see cref="BufferedBodyStream"/>), not one read of the
    /// body each: the Gateway relays the catalog through this alone, so the body is copied once on its way.
    /// </summary>
    public bool Coalesces { get; init; }

    protected override Stream Wrap(Stream body) => new ResumingStream(this, body, _firstReplica);

    // The replica that answered: the attempt's message, its address rewritten by the routing handler.
    private static string Replica(HttpResponseMessage response) => response.RequestMessage?.RequestUri?.Authority ?? "unknown";

    /// <summary>The array's bytes, as far as its last whole product, from one replica and then, if need be, another.</summary>
    private sealed class ResumingStream(ResumingCatalogContent<TOptions> owner, Stream body, string replica) : BufferedBodyStream(body, owner.Coalesces)
    {
        private bool _resumable = true; // the Catalog's products have been found where they end
        private byte _last; // the last byte read from this source
        private bool _resumed; // this source continues another's array
        private bool _joined; // its first product or its ']' has been joined on
        private int _lastWhole; // the last product read whole
        private bool _anyWhole; // one has been: the array's '[' has been handed on with it
        private int _resumes;
        private HttpResponseMessage? _current;
        private readonly BoundedReads _reads = new();

        protected override void Dispose(bool disposing)
        {
            base.Dispose(disposing); // the body first: it ends a read left running
            if (disposing)
            {
                _current?.Dispose();
                _reads.Dispose();
            }
        }

        private bool CanResume => _resumable && _resumes < owner.MaxResumes;

        /// <summary>One read of the body, given the silence bound if a resume could follow it; past the bound, a <see cref="SilenceException"/>.</summary>
        protected override async ValueTask<int> ReadBodyAsync(Memory<byte> free, CancellationToken cancellationToken)
        {
            var bound = CanResume && owner.Budget.HasToken ? owner.Silence.Bound : (TimeSpan?)null;
            return await _reads.ReadAsync(Body, free, bound, cancellationToken) ?? throw new SilenceException($"silent for {bound!.Value.TotalMilliseconds:F0} ms");
        }

        /// <summary>Takes a read that may have ended or failed; on silence or failure, swaps in the rest from another replica.</summary>
        protected override async ValueTask TakeAsync(ValueTask<int> pending, CancellationToken cancellationToken)
        {
            int read;
            string? why = null;
            try
            {
                read = await pending;
            }
            catch (Exception failure) when (failure is SilenceException or IOException or HttpRequestException or ObjectDisposedException && !cancellationToken.IsCancellationRequested && CanResume)
            {
                (read, why) = (0, failure is SilenceException ? failure.Message : "failed: " + failure.Message);
            }

            if (why is null && read == 0)
            {
                // The body's end: the whole array if its last byte is the ']', else a replica that stopped short.
                if (_last == (byte)']' || !_resumable)
                {
                    (Ready, Ended) = (End, true);
                }
                else if (!CanResume)
                {
                    throw new IOException("The Catalog's response ended before its JSON array did.");
                }
                else
                {
                    why = "ended early";
                }
            }

            if (why is not null)
            {
                await ResumeAsync(why, cancellationToken);
            }
            else if (Ended)
            {
                if (_resumes == 0 && _reads.LongestWait > TimeSpan.Zero)
                {
                    // A body read whole from its one replica, its reads timed: what a healthy body's waits are.
                    owner.Silence.Add(_reads.LongestWait);
                }
            }
            else
            {
                Took(read);
            }
        }

        /// <summary>Takes bytes read, and finds how far they may be handed on.</summary>
        protected override void Took(int read)
        {
            _last = Buffer[End + read - 1];
            End += read;
            Scan();
        }

        private async Task ResumeAsync(string why, CancellationToken cancellationToken)
        {
            _resumes++;
            owner.Budget.Spend();
            var silent = replica;
            using var span = PerfTelemetry.ActivitySource.StartActivity("catalog resume");
            span?.SetTag("catalog.replica", silent);
            span?.SetTag("catalog.resume.after", _lastWhole);
            span?.SetTag("catalog.resume.reason", why);
            Resumes.Add(1, new KeyValuePair<string, object?>("catalog.resume.reason", why.StartsWith("silent", StringComparison.Ordinal) ? "silent" : "failed"));
            owner.Logger.LogWarning("Catalog replica {Replica} {Why} mid-body after product {Id}: the rest asked of another replica", silent, why, _lastWhole);

            // The old source's partial product is dropped; the new source's bytes go after the last whole one.
            await Body.DisposeAsync();
            _current?.Dispose();
            _current = await owner._resume(_lastWhole, silent, cancellationToken);
            _current.EnsureSuccessStatusCode();
            Body = await _current.Content.ReadAsStreamAsync(cancellationToken);
            replica = Replica(_current);
            span?.SetTag("catalog.resume.replica", replica);
            (End, _last) = (Ready, 0);
            // Before any product arrived whole, nothing was handed on: the new source is read from its own '['.
            (_resumed, _joined) = (_anyWhole, false);
        }

        /// <summary>
        /// Finds where the last product that has arrived whole ends, and its id. Every Catalog rung writes the array
        /// compact, each product's <c>id</c> first, so a product ends where <c>,{"id":</c> begins the next: bytes that
        /// JSON cannot hold inside a string, where a quote is escaped. The search runs back from the newest bytes and
        /// stops at the first match, a product's length away, so it costs next to nothing per read. A body in another
        /// form (no match in 1 MiB) is passed on as it comes, and not resumed.
        /// </summary>
        private void Scan()
        {
            if (!_resumable || (_resumed && !_joined && !TryJoin()))
            {
                Ready = _resumable ? Ready : End;
                return;
            }

            var pending = Buffer.AsSpan(Ready, End - Ready);
            var boundary = pending.LastIndexOf(",{\"id\":"u8);
            if (boundary > 0 && pending[..boundary].LastIndexOf(ProductStart) is var start and >= 0
                && Utf8Parser.TryParse(pending[(start + ProductStart.Length)..boundary], out int id, out _))
            {
                (_lastWhole, _anyWhole, Ready) = (id, true, Ready + boundary);
            }
            else if (pending.Length > 1 << 20)
            {
                (_resumable, Ready) = (false, End);
            }
        }

        private static ReadOnlySpan<byte> ProductStart => "{\"id\":"u8;

        // A resumed source's '[' becomes the ',' after the last whole product, or is dropped before its ']' (nothing
        // was left): false until its first two bytes are in.
        private bool TryJoin()
        {
            if (End - Ready < 2)
            {
                return false;
            }

            switch (Buffer[Ready], Buffer[Ready + 1])
            {
                case ((byte)'[', (byte)'{'):
                    Buffer[Ready] = (byte)',';
                    break;
                case ((byte)'[', (byte)']'):
                    Start = Ready += 1;
                    break;
                default:
                    throw new IOException("The resumed Catalog read is not a JSON array of products.");
            }

            _joined = true;
            return true;
        }
    }

    /// <summary>A read of the body that waited past the silence bound (<see cref="BoundedReads"/>): its replica is left.</summary>
    private sealed class SilenceException(string message) : Exception(message);
}
