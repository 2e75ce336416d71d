/**
 * What the FLIP-27 source readers of this module share: {@link
 * dev.changeflow.sources.reader.SequentialSourceReaderBase}, a reader that takes its splits one at
 * a time, in assignment order, from an Iceberg table (the streaming change feed's {@code
 * ChangeFeedSourceReader} and the snapshot source's {@code TableVersionReader}).
 */
package dev.changeflow.sources.reader;
