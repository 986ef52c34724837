package dev.jpipeline.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

/** Sizes, choices, and the help and version subcommands. */
class CommandLineShapeTest {

    @Test
    void sizesTakeBinaryUnitsInEveryCommonSpelling() {
        assertEquals(4096, ByteSize.parse("4096"));
        assertEquals(4096, ByteSize.parse("4096b"));
        assertEquals(64L << 10, ByteSize.parse("64k"));
        assertEquals(64L << 10, ByteSize.parse("64KiB"));
        assertEquals(64L << 10, ByteSize.parse("64kb"));
        assertEquals(4L << 20, ByteSize.parse("4MiB"));
        assertEquals(256L << 20, ByteSize.parse("256MiB"));
        assertEquals(3L << 29, ByteSize.parse("1.5g"));
        assertEquals(2L << 30, ByteSize.parse("2 GiB"));
        assertEquals(0, ByteSize.parse("0"));
    }

    @Test
    void aBadSizeNamesTheValueAndTheAcceptedForms() {
        for (String bad : new String[] {"-3", "lots", "4TiB", "1.0000001k", "9999999999g", ""}) {
            TypeConversionException e = assertThrows(TypeConversionException.class, () -> ByteSize.parse(bad), bad);
            assertTrue(e.getMessage().startsWith("'" + bad + "' is "), e.getMessage());
            assertTrue(e.getMessage().contains("KiB, MiB or GiB"), e.getMessage());
        }
        String[] r = Cli.run("stream", "--synthetic", "1.3k");
        assertEquals("2", r[0]);
        assertEquals("jpipeline: Invalid value for option '--synthetic': '1.3k' is 1331.2 bytes: a size must be a "
            + "whole number of bytes below 2^63 (" + ByteSize.FORMS + ")", r[2].strip());
    }

    @Test
    void streamAcceptsTheSizesItPrints() {
        String[] r = Cli.run("stream", "--synthetic", "4MiB", "--chunk", "0.5MiB", "--op", "SUM");
        assertEquals("0", r[0], r[2]);
        assertTrue(r[1].contains("synthetic (4.0 MiB)") && r[1].contains("chunks of 512.0 KiB, sum"), r[1]);
    }

    @Test
    void helpListsTheChoicesOfOpAndWait() {
        String[] r = Cli.run("help", "stream");
        assertEquals("0", r[0], r[2]);
        String help = r[1].replaceAll("\\s+", " ");
        assertTrue(help.contains("--op=OP What to compute: sum, crc32c, sha256 (default crc32c)"), help);
        assertTrue(help.contains("--wait=STRATEGY How threads wait: spin, yield, adaptive, block"), help);
        assertTrue(help.contains("--copy-policy=POLICY Where producers' copies run: auto, producer, engine"), help);
        String[] bad = Cli.run("stream", "--wait", "sleepy");
        assertEquals("2", bad[0]);
        assertTrue(bad[2].contains("[SPIN, YIELD, ADAPTIVE, BLOCK] (case-insensitive) but was 'sleepy'"), bad[2]);
    }

    @Test
    void versionIsACommandAndAnOption() {
        String[] command = Cli.run("version");
        String[] option = Cli.run("--version");
        assertEquals("0", command[0], command[2]);
        assertTrue(command[1].startsWith("jpipeline " + BuildVersion.version() + "\n"), command[1]);
        assertEquals(option[1], command[1]);
        for (String sub : new String[] {"stream", "demo", "examples"}) {
            String[] v = Cli.run(sub, "--version");
            assertEquals("0", v[0], v[2]);
            assertEquals(option[1], v[1], sub + " --version");
        }
        String[] help = Cli.run("help");
        assertEquals("0", help[0]);
        assertTrue(help[1].contains("stream") && help[1].contains("version"), help[1]);
    }

    @Test
    void everyCommandsHelpWrapsBetweenOptionsAndLabelsEveryValueInCapitals() {
        for (var command : Main.commandLine().getSubcommands().values()) {
            var spec = command.getCommandSpec();
            if (spec.usageMessage().hidden()) continue;
            String[] help = Cli.run(spec.name(), "--help");
            assertEquals("0", help[0], spec.name() + ": " + help[2]);
            // the synopsis runs from "Usage:" to the first line that does not continue it
            String[] lines = help[1].split("\n");
            int depth = 0;
            for (int i = 0; i < lines.length && (i == 0 || lines[i].startsWith(" ")); i++) {
                for (String token : lines[i].strip().split(" +")) {
                    for (char c : token.toCharArray()) depth += c == '[' ? 1 : c == ']' ? -1 : 0;
                    assertEquals(0, depth, spec.name() + "'s synopsis breaks inside an option at '" + token
                        + "' (line " + (i + 1) + "):\n" + help[1]);
                }
            }
            for (var option : spec.options()) {
                if (option.hidden() || option.arity().max() == 0) continue;
                assertTrue(option.paramLabel().matches("[A-Z]+"), spec.name() + " " + option.longestName()
                    + " labels its value '" + option.paramLabel() + "': labels are one word in capitals (N, SIZE)");
            }
        }
    }
}
