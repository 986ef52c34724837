package dev.jpipeline.cli;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Sizes in bytes, binary units: {@code 4096}, {@code 64k}, {@code 64KiB}, {@code 4MiB}, {@code 1.5g},
 * {@code 2GiB}. The unit is one of k, m, g (optionally followed by {@code b} or {@code iB}, any case); a decimal
 * must come to a whole number of bytes. The picocli converter of every size option.
 */
final class ByteSize implements ITypeConverter<Long> {

    /** The accepted forms, for error messages. */
    static final String FORMS = "bytes (4096), or a number with k, m or g, or KiB, MiB or GiB (64k, 4MiB, 1.5g)";

    private static final Pattern SIZE =
        Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(?:([kmg])(?:i?b)?|b)?", Pattern.CASE_INSENSITIVE);

    @Override
    public Long convert(String text) {
        return parse(text);
    }

    /**
     * The number of bytes {@code text} stands for.
     *
     * @throws TypeConversionException naming {@code text} and the accepted forms, when it is none of them, is not a
     *                                 whole number of bytes, or exceeds 2^63 - 1 bytes
     */
    static long parse(String text) {
        Matcher m = SIZE.matcher(text.strip());
        if (!m.matches()) {
            throw new TypeConversionException("'" + text + "' is not a size: use " + FORMS);
        }
        int shift = m.group(2) == null ? 0 : switch (m.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            default -> 30;
        };
        BigDecimal bytes = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(1L << shift));
        try {
            return bytes.longValueExact();
        } catch (ArithmeticException e) {
            throw new TypeConversionException("'" + text + "' is " + bytes.stripTrailingZeros().toPlainString()
                + " bytes: a size must be a whole number of bytes below 2^63 (" + FORMS + ")");
        }
    }

    /** {@code bytes} for people: B, KiB, MiB or GiB, the last three with one decimal unless whole GiB. */
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
