package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class TextTableTest {

    @Test
    void columnsTakeTheWidthOfTheirWidestValueAndFiguresAlignRight() {
        TextTable table = TextTable.of(TextTable.text("name", List.of("a", "a longer name")),
            TextTable.figures("n", 4), TextTable.text("note", List.of()));
        assertEquals("name              n  note", table.header());
        assertEquals("a longer name  1234  x", table.row("a longer name", 1234, "x"));
        assertEquals("a                 7  an open-ended last column", table.row("a", 7, "an open-ended last column"));
    }

    @Test
    void aValueWiderThanItsColumnPrintsWhole() {
        TextTable table = TextTable.of(TextTable.text("k", List.of("ab")), TextTable.text("v", List.of()));
        assertEquals("abcd  v", table.row("abcd", "v"));
    }

    @Test
    void aRowOfTheWrongLengthIsRefused() {
        TextTable table = TextTable.of(TextTable.text("k", List.of()), TextTable.figures("n", 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> table.row("only one"));
        assertEquals("a row of this table has 2 cells, got 1", e.getMessage());
    }
}
