package dev.jpipeline.cli;

import dev.jpipeline.simt.Schedule;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** The {@code --replay} value: a checked-execution schedule, {@code SEED} or {@code SEED/DECISIONS}. */
final class ScheduleConverter implements ITypeConverter<Schedule> {

    @Override
    public Schedule convert(String text) {
        try {
            return Schedule.parse(text);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
