package dev.jpipeline.cli;

import java.util.Collection;
import java.util.List;

/**
 * A table printed a row at a time, as each row's results arrive. So that rows line up without being held back,
 * every column's width is fixed up front: the widest of its header and of the values it may hold (the names are
 * known before the run, the results are bounded: a finding kind, a time). Columns are two spaces apart; text is
 * left-aligned, figures right-aligned. A value wider than its column still prints whole and pushes its row; only
 * the last column has no bound, so it takes whatever is open-ended (a schedule, a note).
 */
final class TextTable {

    /** A column: its header, its width, and whether its values are figures (right-aligned). */
    record Column(String header, int width, boolean figures) {
    }

    private final List<Column> columns;

    private TextTable(List<Column> columns) {
        this.columns = List.copyOf(columns);
    }

    /** A column of text as wide as its header and its widest value. */
    static Column text(String header, Collection<String> values) {
        return new Column(header, widest(header, values), false);
    }

    /** A column of figures, as wide as its header and {@code widest} characters. */
    static Column figures(String header, int widest) {
        return new Column(header, Math.max(header.length(), widest), true);
    }

    /**
     * A table of these columns.
     *
     * @param columns the columns, left to right
     * @return the table
     */
    static TextTable of(Column... columns) {
        return new TextTable(List.of(columns));
    }

    /** The header line: a figures column's header sits over its figures' right edge. */
    String header() {
        return row(columns.stream().map(Column::header).toArray());
    }

    /**
     * One row.
     *
     * @param cells a value per column, left to right
     * @return the row, without a line break
     * @throws IllegalArgumentException if the number of cells is not the number of columns
     */
    String row(Object... cells) {
        if (cells.length != columns.size()) {
            throw new IllegalArgumentException("a row of this table has " + columns.size() + " cells, got "
                + cells.length);
        }
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            cell(line, i, String.valueOf(cells[i]), columns.get(i).figures());
        }
        return line.toString().stripTrailing();
    }

    private void cell(StringBuilder line, int index, String value, boolean right) {
        if (index > 0) line.append("  ");
        int pad = Math.max(0, columns.get(index).width() - value.length());
        if (right) line.repeat(' ', pad);
        line.append(value);
        if (!right) line.repeat(' ', pad);
    }

    private static int widest(String header, Collection<String> values) {
        int width = header.length();
        for (String value : values) width = Math.max(width, value.length());
        return width;
    }
}
