using System.Text;

namespace Bench.Reports;

/// <summary>A table as the reports and the pages quoting them write it: the header row, the alignment row, then the rows, each line ended.</summary>
public static class MarkdownTable
{
    public static string Of(string header, string alignment, IEnumerable<string> rows)
    {
        var table = new StringBuilder().AppendLine(header).AppendLine(alignment);
        foreach (var row in rows)
        {
            table.AppendLine(row);
        }

        return table.ToString();
    }
}
