using System.Buffers;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Telemetry;

namespace Frontend.Api.Replicas;

/// <summary>
/// The Catalog's product list as Frontend.Replicas' optimized rung hands it to every Frontend.CatalogClient rung: the
/// same JSON array, read on. Hedging acts before the headers; this covers the body. The bytes pass through as they
/// arrive, held back only to the end of the last product that has arrived whole. When the replica goes silent for
/// longer than <see cref="BodySilence{TOptions}.Bound"/>, or its connection fails, the read asks another replica for the
/// products after that one (<c>GET /catalog/products?after={id}</c>, a keyset read) and splices them on: the rest of
/// the array, its <c>[</c> made the <c>,</c> that follows the last product, or its <c>]</c> alone. The reader above sees
/// one array, byte for byte a whole one's products, so the client's product list is the same.
/// A resume spends a hedge (<see cref="HedgeBudget{TOptions}"/>); with none left, or after
/// <see cref="HedgeOptions.MaxResumes"/>, the read waits for its replica, as the naive rung always does.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class ResumingCatalogContent : WrappedContent
{
    private static readonly Counter<long> Resumes = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.client.resumes", "{resume}", "Catalog reads resumed on another replica after theirs went silent or failed mid-body, by reason.");

    private readonly string _firstReplica;
    private readonly Resume _resume;

    public delegate Task<HttpResponseMessage> Resume(int after, string silentReplica, CancellationToken cancellationToken);

    /// <summary>Wraps <paramref name="first"/>'s content, in its place: read it through this. Its length may change.</summary>
    public ResumingCatalogContent(HttpResponseMessage first, Resume resume, BodySilence<ReplicaOptions> silence, HedgeBudget<ReplicaOptions> budget, int maxResumes, ILogger logger)
        : base(first.Content, keepsLength: false)
    {
        _firstReplica = Replica(first);
        _resume = resume;
        Silence = silence;
        Budget = budget;
        MaxResumes = maxResumes;
        Logger = logger;
    }

    private BodySilence<ReplicaOptions> Silence { get; }

    private HedgeBudget<ReplicaOptions> Budget { get; }

    private int MaxResumes { get; }

    private ILogger Logger { get; }

    protected override Stream Wrap(Stream body) => new ResumingStream(this, body, _firstReplica);

    // The replica that answered: the attempt's message, its address rewritten by ReplicaRouting.
    private static string Replica(HttpResponseMessage response) => response.RequestMessage?.RequestUri?.Authority ?? "unknown";

    /// <summary>The array's bytes, as far as its last whole product, from one replica and then, if need be, another.</summary>
    private sealed class ResumingStream(ResumingCatalogContent owner, Stream body, string replica) : ReadOnlyStream
    {
        private byte[] _buffer = ArrayPool<byte>.Shared.Rent(64 * 1024);
        private int _start; // the next byte to hand on
        private int _safe; // the end of what may be handed on: the last whole product's '}', or the array's ']'
        private int _end; // the end of the bytes read
        private int _scan; // where the JSON reader goes on from
        private JsonReaderState _state;
        private int _arrayAt = -1; // this source's '['
        private bool _resumed; // this source continues another's array
        private bool _joined; // its first product or its ']' has been joined on
        private bool _ended; // the array's ']' is in
        private bool _idNext;
        private int _id; // the product being read
        private int _lastWhole; // the last product read whole
        private bool _anyWhole; // one has been: the array's '[' has been handed on with it
        private int _resumes;
        private HttpResponseMessage? _current;
        private readonly BoundedReads _reads = new();

        public override async ValueTask<int> ReadAsync(Memory<byte> destination, CancellationToken cancellationToken = default)
        {
            while (_start == _safe)
            {
                if (_ended)
                {
                    return 0;
                }

                await FillAsync(cancellationToken);
            }

            var count = Math.Min(destination.Length, _safe - _start);
            _buffer.AsMemory(_start, count).CopyTo(destination);
            _start += count;
            return count;
        }

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                body.Dispose();
                _current?.Dispose();
                _reads.Dispose();
                ArrayPool<byte>.Shared.Return(_buffer);
                _buffer = [];
            }

            base.Dispose(disposing);
        }

        /// <summary>Reads more of the body, and scans it; on silence or failure, swaps in the rest from another replica.</summary>
        private async Task FillAsync(CancellationToken cancellationToken)
        {
            MakeRoom();
            int read;
            string? why;
            try
            {
                (read, why) = await ReadWithinBoundAsync(cancellationToken);
            }
            catch (Exception failure) when (failure is IOException or HttpRequestException or ObjectDisposedException && !cancellationToken.IsCancellationRequested && CanResume)
            {
                (read, why) = (0, "failed: " + failure.Message);
            }

            if (why is null && read == 0)
            {
                if (!CanResume)
                {
                    throw new IOException("The Catalog's response ended before its JSON array did.");
                }

                why = "ended early";
            }

            if (why is not null)
            {
                await ResumeAsync(why, cancellationToken);
                return;
            }

            _end += read;
            Scan();
            if (_ended && _resumes == 0 && _reads.LongestWait > TimeSpan.Zero)
            {
                // A body read whole from its one replica, its reads timed: what a healthy body's waits are.
                owner.Silence.Add(_reads.LongestWait);
            }
        }

        private bool CanResume => _resumes < owner.MaxResumes;

        /// <summary>One read of the body, given the silence bound if a resume could follow it; the reason to resume, if any.</summary>
        private async Task<(int Read, string? Why)> ReadWithinBoundAsync(CancellationToken cancellationToken)
        {
            var bound = CanResume && owner.Budget.HasToken ? owner.Silence.Bound : (TimeSpan?)null;
            return await _reads.ReadAsync(body, _buffer.AsMemory(_end), bound, cancellationToken) is { } read
                ? (read, null)
                : (0, $"silent for {bound!.Value.TotalMilliseconds:F0} ms");
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
            Resumes.Add(1, new(PerfTelemetry.FlagTag, Pitfalls.FrontendReplicas), new(PerfTelemetry.VariantTag, PerfMode.Optimized),
                new("catalog.resume.reason", why.StartsWith("silent", StringComparison.Ordinal) ? "silent" : "failed"));
            owner.Logger.LogWarning("Catalog replica {Replica} {Why} mid-body after product {Id}: the rest asked of another replica", silent, why, _lastWhole);

            // The old source's partial product is dropped; the new source's bytes go after the last whole one.
            await body.DisposeAsync();
            _current?.Dispose();
            _current = await owner._resume(_lastWhole, silent, cancellationToken);
            _current.EnsureSuccessStatusCode();
            body = await _current.Content.ReadAsStreamAsync(cancellationToken);
            replica = Replica(_current);
            span?.SetTag("catalog.resume.replica", replica);
            _end = _scan = _safe;
            _state = default;
            // Before any product arrived whole, nothing was handed on: the new source is read from its own '['.
            (_arrayAt, _resumed, _joined, _idNext) = (-1, _anyWhole, false, false);
        }

        /// <summary>Moves the bytes not handed on yet to the buffer's start, and doubles it if it is full of them.</summary>
        private void MakeRoom()
        {
            if (_start > 0)
            {
                _buffer.AsSpan(_start, _end - _start).CopyTo(_buffer);
                (_safe, _scan, _end) = (_safe - _start, _scan - _start, _end - _start);
                _arrayAt = _arrayAt >= _start ? _arrayAt - _start : -1;
                _start = 0;
            }

            if (_end == _buffer.Length)
            {
                var larger = ArrayPool<byte>.Shared.Rent(_buffer.Length * 2);
                _buffer.AsSpan(0, _end).CopyTo(larger);
                ArrayPool<byte>.Shared.Return(_buffer);
                _buffer = larger;
            }
        }

        /// <summary>Finds, in the bytes read since the last scan, where each product ends and its id.</summary>
        private void Scan()
        {
            var json = new Utf8JsonReader(_buffer.AsSpan(_scan, _end - _scan), isFinalBlock: false, _state);
            while (json.Read())
            {
                var at = _scan + (int)json.TokenStartIndex;
                switch (json.TokenType)
                {
                    case JsonTokenType.StartArray when json.CurrentDepth == 0:
                        _arrayAt = at;
                        break;
                    case JsonTokenType.PropertyName when json.CurrentDepth == 2:
                        _idNext = json.ValueTextEquals("id"u8);
                        break;
                    case JsonTokenType.Number when _idNext:
                        _id = json.GetInt32();
                        _idNext = false;
                        break;
                    case JsonTokenType.EndObject when json.CurrentDepth == 1:
                        Join(_arrayAt, ',');
                        _lastWhole = _id;
                        _anyWhole = true;
                        _safe = _scan + (int)json.BytesConsumed;
                        break;
                    case JsonTokenType.EndArray when json.CurrentDepth == 0:
                        Join(at, null);
                        _safe = _scan + (int)json.BytesConsumed;
                        _ended = true;
                        break;
                }
            }

            _scan += (int)json.BytesConsumed;
            _state = json.CurrentState;
        }

        // A resumed source's first product follows the last whole one after a ',' (its '[' becomes one); an empty rest
        // is its ']' alone.
        private void Join(int at, char? separator)
        {
            if (!_resumed || _joined)
            {
                return;
            }

            if (separator is { } comma)
            {
                _buffer[at] = (byte)comma;
            }

            _start = at;
            _joined = true;
        }
    }
}
