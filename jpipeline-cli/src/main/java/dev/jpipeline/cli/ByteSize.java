package dev.jpipeline.cli;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;

/** Sizes such as {@code 4096}, {@code 64k}, {@code 1m}, {@code 2g} (binary units). */
final class ByteSize implements ITypeConverter<Long> {

    @Override
    public Long convert(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        if (s.endsWith("b")) {
            s = s.substring(0, s.length() - 1);
        }
        switch (s.isEmpty() ? ' ' : s.charAt(s.length() - 1)) {
            case 'k' -> unit = 1L << 10;
            case 'm' -> unit = 1L << 20;
            case 'g' -> unit = 1L << 30;
            default -> unit = 1;
        }
        if (unit != 1) {
            s = s.substring(0, s.length() - 1);
        }
        try {
            long value = Long.parseLong(s);
            if (value <= 0) {
                throw new IllegalArgumentException();
            }
            return Math.multiplyExact(value, unit);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("'" + text + "' is not a positive size (examples: 4096, 64k, 1m, 2g)");
        }
    }

    static String format(long bytes) {
        if (bytes >= 1L << 30 && bytes % (1L << 30) == 0) {
            return bytes / (1L << 30) + " GiB";
        }
        if (bytes >= 1L << 20) {
            return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
        }
        if (bytes >= 1L << 10) {
            return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
        }
        return bytes + " B";
    }
}
