package dev.jpipeline;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;

/**
 * Test support: a read-only "file" that only answers positional reads, the one kind of read the copy engine
 * makes; every other operation is unsupported. Subclasses say what a read returns and how long the file is.
 */
public abstract class PositionalReadChannel extends FileChannel {

    protected PositionalReadChannel() {
    }

    @Override
    public abstract int read(ByteBuffer dst, long position) throws IOException;

    @Override
    public abstract long size() throws IOException;

    private static IOException unsupported() {
        return new IOException("a test channel answers positional reads only");
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        throw unsupported();
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        throw unsupported();
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        throw unsupported();
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        throw unsupported();
    }

    @Override
    public long position() {
        return 0;
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
        throw unsupported();
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
        throw unsupported();
    }

    @Override
    public void force(boolean metaData) {
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
        throw unsupported();
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
        throw unsupported();
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
        throw unsupported();
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
        throw unsupported();
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) throws IOException {
        throw unsupported();
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) throws IOException {
        throw unsupported();
    }

    @Override
    protected void implCloseChannel() {
    }
}
