using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Extensions.Primitives;

namespace Uploads.Api.Reader;

/// <summary>
/// A multipart/form-data body read in place from a <see cref="PipeReader"/>: the delimiter is found with the
/// vectorized <see cref="MemoryExtensions.IndexOf{T}(ReadOnlySpan{T}, ReadOnlySpan{T})"/> in each of Kestrel's
/// buffers (and across the seam between two), and a section's bytes are handed over as the slices of those
/// buffers that hold them: nothing is copied. It answers bad input as <see cref="MultipartReader"/> does, with
/// the same exceptions and messages, so both rungs give the same problem: the same preamble, header, line and
/// epilogue limits, lines that end only at CRLF, and an <see cref="IOException"/> when the body ends before a
/// closing delimiter and the two bytes after it.
/// </summary>
public sealed class MultipartBodyParser(PipeReader body, string boundary)
{
    private const int HeadersLengthLimit = MultipartReader.DefaultHeadersLengthLimit;
    private const int HeadersCountLimit = MultipartReader.DefaultHeadersCountLimit;
    private const int BoundaryLineLimit = 100;

    // Before the first section the delimiter may open the body; after it, it follows the section's CRLF.
    private readonly byte[] _firstDelimiter = Encoding.UTF8.GetBytes("--" + boundary);
    private readonly byte[] _delimiter = Encoding.UTF8.GetBytes("\r\n--" + boundary);
    private bool _started;
    private bool _inSection;
    private bool _final;

    /// <summary>The headers of the next section, or null after the closing delimiter; an unread section is skipped.</summary>
    public async ValueTask<Dictionary<string, StringValues>?> ReadNextSectionAsync(CancellationToken cancellationToken)
    {
        if (!_started)
        {
            _started = true;
            await ReadToDelimiterAsync(_firstDelimiter, write: null, limit: HeadersLengthLimit, cancellationToken);
        }
        else if (_inSection)
        {
            await ReadSectionAsync(write: null, cancellationToken);
        }

        if (_final)
        {
            await DrainEpilogueAsync(cancellationToken);
            return null;
        }

        var headers = await ReadHeadersAsync(cancellationToken);
        _inSection = true;
        return headers;
    }

    /// <summary>Hands the current section's bytes to <paramref name="write"/> as they arrive (each slice valid only during the call).</summary>
    public async ValueTask ReadSectionAsync(Func<ReadOnlySequence<byte>, ValueTask>? write, CancellationToken cancellationToken)
    {
        await ReadToDelimiterAsync(_delimiter, write, limit: null, cancellationToken);
        _inSection = false;
    }

    private async ValueTask ReadToDelimiterAsync(byte[] delimiter, Func<ReadOnlySequence<byte>, ValueTask>? write, long? limit, CancellationToken cancellationToken)
    {
        long seen = 0;
        var found = false;
        while (!found)
        {
            var result = await body.ReadAsync(cancellationToken);
            var buffer = result.Buffer;
            var consumed = buffer.Start;
            try
            {
                var at = IndexOf(buffer, delimiter);

                // Bytes that are certainly data: all before the delimiter, or all but a tail that may start one.
                var data = at >= 0 ? at : Math.Max(0, buffer.Length - (delimiter.Length - 1));
                if (data > 0)
                {
                    seen += data;
                    if (seen > limit)
                    {
                        throw new InvalidDataException($"Multipart header length limit {limit} exceeded. Too much data before the first boundary.");
                    }

                    if (write is not null)
                    {
                        await write(buffer.Slice(0, data));
                    }
                }

                consumed = buffer.GetPosition(data);

                // MultipartReader reads a delimiter only with room for the two bytes of a closing one after it.
                found = at >= 0 && buffer.Length - at >= delimiter.Length + 2;
                if (found)
                {
                    consumed = buffer.GetPosition(at + delimiter.Length);
                }
                else if (result.IsCompleted)
                {
                    throw new IOException("Unexpected end of Stream, the content may have already been read by another component. ");
                }
            }
            finally
            {
                // Also when refused: Kestrel drains the rest of the body after the response, which needs the reader free.
                body.AdvanceTo(consumed, found ? consumed : buffer.End);
            }
        }

        // The delimiter line: "--" closes the body; anything else (whitespace, by the RFC) opens a section.
        _final = (await ReadLineAsync(BoundaryLineLimit, cancellationToken)).Trim() == "--";
    }

    private async ValueTask<Dictionary<string, StringValues>> ReadHeadersAsync(CancellationToken cancellationToken)
    {
        var totalSize = 0;
        var accumulator = new KeyValueAccumulator();
        var line = await ReadLineAsync(HeadersLengthLimit - totalSize, cancellationToken);
        while (!string.IsNullOrEmpty(line))
        {
            if (HeadersLengthLimit - totalSize < line.Length)
            {
                throw new InvalidDataException($"Multipart headers length limit {HeadersLengthLimit} exceeded.");
            }

            totalSize += line.Length;
            var split = line.IndexOf(':', StringComparison.Ordinal);
            if (split <= 0)
            {
                throw new InvalidDataException($"Invalid header line: {line}");
            }

            accumulator.Append(line[..split], line[(split + 1)..].Trim());
            if (accumulator.KeyCount > HeadersCountLimit)
            {
                throw new InvalidDataException($"Multipart headers count limit {HeadersCountLimit} exceeded.");
            }

            line = await ReadLineAsync(HeadersLengthLimit - totalSize, cancellationToken);
        }

        return accumulator.GetResults();
    }

    /// <summary>A line ends at CRLF only; past <paramref name="limit"/> bytes without one it is refused; at the end of the body it is what is left.</summary>
    private async ValueTask<string> ReadLineAsync(int limit, CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await body.ReadAsync(cancellationToken);
            var buffer = result.Buffer;
            var reader = new SequenceReader<byte>(buffer.Slice(0, Math.Min(buffer.Length, limit + 1L)));
            if (reader.TryReadTo(out ReadOnlySequence<byte> line, "\r\n"u8))
            {
                var text = Encoding.UTF8.GetString(line);
                body.AdvanceTo(reader.Position);
                return text;
            }

            if (result.IsCompleted)
            {
                var rest = buffer.Length > limit ? null : Encoding.UTF8.GetString(buffer);
                body.AdvanceTo(buffer.End);
                return rest ?? throw LineTooLong(limit);
            }

            body.AdvanceTo(buffer.Start, buffer.End);
            if (buffer.Length > limit)
            {
                throw LineTooLong(limit);
            }
        }
    }

    private static InvalidDataException LineTooLong(int limit) => new($"Line length limit {limit} exceeded.");

    private async ValueTask DrainEpilogueAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await body.ReadAsync(cancellationToken);
            var length = result.Buffer.Length;
            body.AdvanceTo(result.IsCompleted ? result.Buffer.End : result.Buffer.Start, result.Buffer.End);
            if (length > HeadersLengthLimit)
            {
                throw new InvalidDataException($"The stream exceeded the data limit {HeadersLengthLimit}.");
            }

            if (result.IsCompleted)
            {
                return;
            }
        }
    }

    /// <summary>
    /// Where <paramref name="delimiter"/> first starts in <paramref name="buffer"/>, or -1: a vectorized search in each
    /// segment, and one across each seam, over the last bytes before it and the first after it.
    /// </summary>
    public static long IndexOf(in ReadOnlySequence<byte> buffer, ReadOnlySpan<byte> delimiter)
    {
        if (buffer.IsSingleSegment)
        {
            return buffer.FirstSpan.IndexOf(delimiter);
        }

        var reach = delimiter.Length - 1;
        Span<byte> seam = stackalloc byte[2 * reach];
        var tail = 0; // bytes of the seam that end the data before the current segment (at most reach)
        long offset = 0;
        foreach (var memory in buffer)
        {
            var span = memory.Span;
            if (span.IsEmpty)
            {
                continue;
            }

            var head = Math.Min(reach, span.Length);
            span[..head].CopyTo(seam[tail..]);
            if (tail > 0)
            {
                var across = seam[..(tail + head)].IndexOf(delimiter);
                if (across >= 0)
                {
                    return offset - tail + across;
                }
            }

            var within = span.IndexOf(delimiter);
            if (within >= 0)
            {
                return offset + within;
            }

            // The seam's next tail: the last bytes of everything so far, up to reach of them.
            if (span.Length >= reach)
            {
                span[^reach..].CopyTo(seam);
                tail = reach;
            }
            else
            {
                var joined = tail + head;
                var keep = Math.Min(reach, joined);
                seam[(joined - keep)..joined].CopyTo(seam);
                tail = keep;
            }

            offset += span.Length;
        }

        return -1;
    }
}
