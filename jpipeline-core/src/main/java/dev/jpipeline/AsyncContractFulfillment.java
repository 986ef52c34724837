package dev.jpipeline;

/**
 * What a {@code memcpyAsync} call promises about completion: mirrors {@code cuda::async_contract_fulfillment}.
 * (The CUDA documentation shows {@code memcpy_async} returning {@code void}; the implementation returns this.)
 */
public enum AsyncContractFulfillment {
    /** The copy was performed synchronously: the calling thread already sees the destination updated. */
    NONE,
    /** The copy is in flight; its completion is tracked by the pipeline stage (or barrier phase) it belongs to. */
    ASYNC
}
