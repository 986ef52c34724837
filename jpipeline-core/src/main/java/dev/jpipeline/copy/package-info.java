/**
 * The copy engine behind {@code memcpyAsync}: worker threads that perform large copies and file reads while the
 * issuing thread goes on. The counterpart of the GPU's asynchronous copy hardware; a pipeline uses
 * {@link dev.jpipeline.copy.CopyEngine#shared()} unless its shared state names an engine of its own.
 */
package dev.jpipeline.copy;
