package dev.jpipeline.cli;

import dev.jpipeline.CopyPolicy;
import java.util.Locale;

/** The {@code --copy-policy} choices: where producers' copies run. */
enum CopyPolicyOption {
    /** {@link CopyPolicy#AUTO}. */
    AUTO(CopyPolicy.AUTO),
    /** {@link CopyPolicy#ON_ISSUING_THREAD}. */
    PRODUCER(CopyPolicy.ON_ISSUING_THREAD),
    /** {@link CopyPolicy#ON_COPY_ENGINE}. */
    ENGINE(CopyPolicy.ON_COPY_ENGINE);

    private final CopyPolicy policy;

    CopyPolicyOption(CopyPolicy policy) {
        this.policy = policy;
    }

    /** The policy this choice names. */
    CopyPolicy policy() {
        return policy;
    }

    /** The name on the command line. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
