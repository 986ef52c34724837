package dev.jpipeline.internal.wait;

/** Something a thread can wait in, able to say what the waiting thread waits for (for hang reports). */
public interface WaitSite {

    /** What the current waiter of this site waits for, with the state it waits on. */
    String describeWait();

    /** The description of {@code site}: its {@link #describeWait()}, else its {@code toString()}. */
    static String describe(Object site) {
        return site instanceof WaitSite w ? w.describeWait() : String.valueOf(site);
    }
}
