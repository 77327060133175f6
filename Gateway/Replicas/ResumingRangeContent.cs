using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Http.Headers;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Telemetry;

namespace Gateway.Replicas;

/// <summary>
/// A relayed download read on from another destination when its own stops mid-body, as Frontend.Api reads on its
/// Catalog list: the same bytes, asked with <c>Range: bytes={received}-</c> and <c>If-Range</c> of the first answer's
/// strong ETag. It applies to a GET answered <c>200</c> with a Content-Length, <c>Accept-Ranges: bytes</c> and a strong
/// ETag (Uploads.Api's file result: the same file on every replica, one shared volume), on a route whose call has
/// another destination (<see cref="HedgedCall"/>). Silence past <see cref="BodySilence{TOptions}.Bound"/>, a failed
/// read or an early end is resumed, at most <see cref="HedgeOptions.MaxResumes"/> times, each spending a hedge. A
/// destination that answers anything but <c>206</c> from that very byte of that very file ends the relay as before: the
/// client's response is cut, never spliced from another file. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal sealed class ResumingRangeContent(
    HttpResponseMessage first, HedgedCall call, ResumingRangeContent.Send send, BodySilence<HedgingOptions> silence,
    HedgeBudget<HedgingOptions> budget, int maxResumes, ILogger logger) : WrappedContent(first.Content, keepsLength: true)
{
    private readonly HttpRequestMessage _request = first.RequestMessage!;
    private readonly long _length = first.Content.Headers.ContentLength!.Value;
    private readonly EntityTagHeaderValue _etag = first.Headers.ETag!;

    private static readonly Counter<long> Resumes = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.gateway.resumes", "{resume}", "Relayed downloads read on from another destination with a Range request, by reason.");

    public delegate Task<HttpResponseMessage> Send(HttpRequestMessage request, CancellationToken cancellationToken);

    /// <summary>Whether <paramref name="response"/> can be read on elsewhere, byte for byte.</summary>
    public static bool Applies(HttpResponseMessage response) =>
        response.StatusCode == HttpStatusCode.OK
        && response.RequestMessage?.Method == HttpMethod.Get
        && response.Headers.AcceptRanges.Contains("bytes")
        && response.Headers.ETag is { IsWeak: false }
        && response.Content.Headers.ContentLength is > 0;

    protected override Stream Wrap(Stream body) => new ResumingStream(this, body);

    private HedgedCall Call => call;

    private Send SendRest => send;

    private BodySilence<HedgingOptions> Silence => silence;

    private HedgeBudget<HedgingOptions> Budget => budget;

    private int MaxResumes => maxResumes;

    private ILogger Logger => logger;

    private sealed class ResumingStream(ResumingRangeContent owner, Stream body) : ReadOnlyStream
    {
        private readonly long _length = owner._length;
        private readonly BoundedReads _reads = new();
        private HttpResponseMessage? _current;
        private string _destination = owner._request.RequestUri!.Authority;
        private long _received;
        private int _resumes;

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            while (true)
            {
                string why;
                try
                {
                    var bound = _resumes < owner.MaxResumes && owner.Budget.HasToken ? owner.Silence.Bound : (TimeSpan?)null;
                    var read = await _reads.ReadAsync(body, buffer, bound, cancellationToken);
                    // YARP's zero-byte reads (wait for data, take none) answer 0 without ending the body.
                    if (read is { } count && (count > 0 || _received == _length || buffer.IsEmpty))
                    {
                        _received += count;
                        if (_received == _length && count > 0 && _resumes == 0 && _reads.LongestWait > TimeSpan.Zero)
                        {
                            owner.Silence.Add(_reads.LongestWait);
                        }

                        return count;
                    }

                    why = read is null ? $"silent for {bound!.Value.TotalMilliseconds:F0} ms" : "ended early";
                }
                catch (Exception failure) when (failure is IOException or HttpRequestException or ObjectDisposedException && !cancellationToken.IsCancellationRequested
                    && _resumes < owner.MaxResumes)
                {
                    why = "failed: " + failure.Message;
                }

                await ResumeAsync(why, cancellationToken);
            }
        }

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                body.Dispose();
                _current?.Dispose();
                _reads.Dispose();
            }

            base.Dispose(disposing);
        }

        private async Task ResumeAsync(string why, CancellationToken cancellationToken)
        {
            if (_resumes >= owner.MaxResumes || owner.Call.Elsewhere(_destination) is not var (destination, address))
            {
                throw new IOException($"The download from {_destination} {why} at byte {_received} of {_length}, and no other destination is left to read it from.");
            }

            _resumes++;
            owner.Budget.Spend();
            using var span = PerfTelemetry.ActivitySource.StartActivity("destination resume");
            span?.SetTag("gateway.destination", destination.DestinationId);
            span?.SetTag("gateway.resume.from", _received);
            span?.SetTag("gateway.resume.reason", why);
            Resumes.Add(1, new("proxy.route_id", owner.Call.Route), new("gateway.resume.reason", why.StartsWith("silent", StringComparison.Ordinal) ? "silent" : "failed"));
            owner.Logger.LogWarning("Download from {Silent} {Why} at byte {Received} of {Length}: the rest asked of {Destination}", _destination, why, _received, _length, destination.DestinationId);

            await body.DisposeAsync();
            _current?.Dispose();
            var request = HedgedRequests.Copy(owner._request);
            request.RequestUri = address;
            request.Headers.Range = new RangeHeaderValue(_received, null);
            request.Headers.IfRange = new RangeConditionHeaderValue(owner._etag);
            _current = await owner.SendRest(request, cancellationToken);
            if (_current.StatusCode != HttpStatusCode.PartialContent
                || _current.Content.Headers.ContentRange is not { From: var from, Length: var length }
                || from != _received || length != _length)
            {
                throw new IOException($"{destination.DestinationId} answered the rest of the download with {(int)_current.StatusCode} {_current.Content.Headers.ContentRange}, not bytes {_received}- of the same {_length}.");
            }

            body = await _current.Content.ReadAsStreamAsync(cancellationToken);
            _destination = address.Authority;
        }
    }
}
