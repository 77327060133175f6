using System.Net;
using System.Text.Json;
using Frontend.Api.CatalogClient;
using Frontend.Api.Replicas;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using CatalogProduct = Frontend.Api.CatalogClient.CatalogProduct;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// Frontend.Replicas' resumed read (ServiceDefaults/Hedging/ResumingCatalogContent.cs): the Catalog's array cut at every
/// byte by a replica that fails there, or stalled after its last product by one that goes silent, is read on from
/// another replica's keyset read (<c>?after={id}</c>) and comes out byte for byte the whole array; text that looks like
/// JSON structure (an <c>"id"</c>, braces, brackets) does not move the cut. Each runs as Frontend.Api reads (one read
/// of the body a fill) and as the Gateway relays (coalescing, some reads left running: <see cref="ResumingCatalogContent{TOptions}.Coalesces"/>).
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
[Lesson(Pitfalls.FrontendReplicas)]
public sealed class ResumingCatalogContentTests
{
    private static readonly CatalogProduct[] Products =
    [
        .. Enumerable.Range(1, 9).Select(i => new CatalogProduct(i * 3, $"SKU-{i:D7}", $"Product {i}", "Plain", "Contoso", "Outdoor", i * 1.25m, i)),
        new(31, "SKU-\"id\":7", "{\"id\":99}, ]", "Café ]},[{ 日本語 🧭 \\\"", "Fabrikam", "[", 0.50m, 0),
        new(40, "SKU-0000040", "", "", "", "", 1_234_567.89m, 10),
    ];

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_read_cut_at_any_byte_is_resumed_after_its_last_whole_product_and_comes_out_whole(bool coalesces)
    {
        var whole = Array(Products);
        for (var cut = 0; cut < whole.Length; cut++)
        {
            var asked = new List<int>();
            using var content = Content(new Source(whole, cut, hang: false, waitEvery: coalesces ? 3 : 0), asked, maxResumes: 2, silence: TimeSpan.FromSeconds(5), coalesces: coalesces);
            var read = await content.ReadAsByteArrayAsync(Cancel);
            Assert.True(whole.AsSpan().SequenceEqual(read), $"cut at byte {cut}: {System.Text.Encoding.UTF8.GetString(read)}");
            Assert.Equal([LastWholeBefore(whole, cut)], asked);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_replica_silent_before_its_last_bytes_is_left_after_the_bound_and_the_rest_is_spliced_on(bool coalesces)
    {
        var whole = Array(Products);
        var lastProductEnd = whole.Length - 1; // all but the ']'
        var asked = new List<int>();
        using var content = Content(new Source(whole, lastProductEnd, hang: true), asked, maxResumes: 2, silence: TimeSpan.FromMilliseconds(200), coalesces: coalesces);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var read = await content.ReadAsByteArrayAsync(Cancel);
        Assert.Equal(whole, read);
        Assert.Equal([31], asked); // the last product is known whole only by the ']' after it
        Assert.InRange(clock.Elapsed, TimeSpan.FromMilliseconds(150), TimeSpan.FromSeconds(5));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Past_its_resumes_a_read_fails_rather_than_return_a_cut_array(bool coalesces)
    {
        var whole = Array(Products);
        var asked = new List<int>();
        using var content = Content(new Source(whole, whole.Length / 2, hang: false), asked, maxResumes: 1, silence: TimeSpan.FromSeconds(5), restFails: true, coalesces: coalesces);
        // HttpContent wraps what its stream throws in an HttpRequestException.
        var failure = await Assert.ThrowsAnyAsync<Exception>(() => content.ReadAsByteArrayAsync(Cancel));
        Assert.True(failure is IOException || failure.InnerException is IOException, failure.ToString());
        Assert.Single(asked);
    }

    [Fact]
    public async Task Coalescing_it_hands_a_relay_everything_that_has_arrived_through_its_one_buffer()
    {
        // As YARP copies a body: a zero-byte read, then reads into a 64 KB buffer. The Gateway relays the catalog
        // through this content alone (no CoalescingContent over it), so it must coalesce by itself: every byte that
        // has arrived goes out in one piece, held back only to the last whole product, and zero-byte reads stop here.
        var whole = Array(Products);
        var pieces = new Dictionary<bool, List<int>>();
        foreach (var coalesces in new[] { false, true })
        {
            var source = new Source(whole, whole.Length, hang: false);
            using var content = Content(source, [], maxResumes: 2, silence: TimeSpan.FromSeconds(5), coalesces: coalesces);
            await using var body = await content.ReadAsStreamAsync(Cancel);
            var relayed = new MemoryStream();
            var buffer = new byte[64 * 1024];
            pieces[coalesces] = [];
            while (true)
            {
                var zeroByte = body.ReadAsync(Memory<byte>.Empty, Cancel);
                Assert.True(zeroByte.IsCompletedSuccessfully, "a zero-byte read waited");
                Assert.Equal(0, await zeroByte);
                var read = await body.ReadAsync(buffer, Cancel);
                if (read == 0)
                {
                    break;
                }

                pieces[coalesces].Add(read);
                relayed.Write(buffer, 0, read);
            }

            Assert.Equal(whole, relayed.ToArray());
            Assert.Equal((whole.Length + 6) / 7 + 1, source.Reads); // each 7-byte piece read once, and the end
        }

        // Up to the start of the last product, known whole only by the ']' after it; then the rest.
        var lastStart = whole.AsSpan().LastIndexOf(",{\"id\":"u8);
        Assert.Equal([lastStart, whole.Length - lastStart], pieces[true]);
        Assert.True(pieces[false].Count > Products.Length / 2, $"one read of the body a fill hands on a product or so at a time: {string.Join(", ", pieces[false])}");
    }

    private static ResumingCatalogContent<ReplicaOptions> Content(Source first, List<int> asked, int maxResumes, TimeSpan silence, bool restFails = false, bool coalesces = false)
    {
        var options = Options.Create(new ReplicaOptions { SilenceFloor = silence, SilenceCeiling = silence, MaxResumes = maxResumes });
        var response = Response(first, "replica-a:1");
        return new ResumingCatalogContent<ReplicaOptions>(
            response,
            (after, silentReplica, _) =>
            {
                asked.Add(after);
                Assert.Equal("replica-a:1", silentReplica);
                var rest = Array(Products.Where(p => p.Id > after));
                return Task.FromResult(Response(new Source(rest, restFails ? rest.Length / 2 : rest.Length, hang: false, waitEvery: coalesces ? 2 : 0), "replica-b:2"));
            },
            new BodySilence<ReplicaOptions>(options), new HedgeBudget<ReplicaOptions>(options), maxResumes, NullLogger.Instance)
        {
            Coalesces = coalesces,
        };
    }

    private static HttpResponseMessage Response(Stream body, string replica) => new(HttpStatusCode.OK)
    {
        Content = new StreamContent(body),
        RequestMessage = new HttpRequestMessage(HttpMethod.Get, $"http://{replica}/catalog/products"),
    };

    private static byte[] Array(IEnumerable<CatalogProduct> products) =>
        JsonSerializer.SerializeToUtf8Bytes(products.ToList(), FrontendJsonContext.Default.ListCatalogProduct);

    // The id of the last product known whole within the first `cut` bytes: the next one's `,{"id":` (7 bytes) is in too (0: none).
    private static int LastWholeBefore(byte[] whole, int cut) =>
        Products.SkipLast(1).Select(p => (p.Id, End: EndOf(whole, p.Id))).Where(p => p.End + 7 <= cut).Select(p => p.Id).DefaultIfEmpty(0).Max();

    private static int EndOf(byte[] whole, int id)
    {
        var json = new Utf8JsonReader(whole);
        var current = 0;
        while (json.Read())
        {
            if (json.TokenType == JsonTokenType.PropertyName && json.CurrentDepth == 2 && json.ValueTextEquals("id"u8) && json.Read())
            {
                current = json.GetInt32();
            }
            else if (json.TokenType == JsonTokenType.EndObject && json.CurrentDepth == 1 && current == id)
            {
                return (int)json.BytesConsumed;
            }
        }

        throw new InvalidOperationException($"no product {id}");
    }

    /// <summary>
    /// The bytes, 7 at a time, up to <c>cut</c>; then a failure, or (<c>hang</c>) nothing until the read is cancelled.
    /// Every <c>waitEvery</c>th read (0: none) does not complete at once, as a read of a socket waits for the next bytes.
    /// </summary>
    private sealed class Source(byte[] bytes, int cut, bool hang, int waitEvery = 0) : ReadOnlyStream
    {
        private int _at;
        private int _reads;

        public int Reads => _reads;

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Assert.False(buffer.IsEmpty, "a zero-byte read was passed on");
            _reads++;
            if (waitEvery > 0 && _reads % waitEvery == 0)
            {
                await Task.Yield();
            }

            if (_at == bytes.Length)
            {
                return 0;
            }

            if (_at == cut)
            {
                if (hang)
                {
                    await Task.Delay(Timeout.Infinite, cancellationToken);
                }

                throw new IOException($"The replica went away at byte {cut}.");
            }

            var count = Math.Min(Math.Min(7, buffer.Length), cut - _at);
            bytes.AsMemory(_at, count).CopyTo(buffer);
            _at += count;
            return count;
        }

    }
}
