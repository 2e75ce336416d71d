package dev.changeflow.jobs.ingest;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.CompositeTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.Objects;

/**
 * The type of records that are handed over between chained operators without a copy: the wire
 * format is the wrapped type's ({@code serialize} / {@code deserialize} delegate), but {@code
 * copy(record)} returns the record itself.
 *
 * <p>With object reuse off (Flink's default, which changeflow keeps), every record passed from one
 * chained operator to the next is deep-copied through its serializer ({@code
 * CopyingChainingOutput}); for a POJO that is reflection over every field and a copy of its byte
 * arrays. The ingest job's readers (and the Java API's {@code AutoCdcFlow.forStream} map) emit each
 * {@code SourceLine} / {@code KafkaChangeRecord} once, and no operator that receives one changes it
 * or keeps it beyond the call (the file progress function and the decoders read it and emit other
 * objects), so the copies protect nothing there — on the pgbench capture they were about 8% of the
 * reader thread (issue #18). Use this type only on such edges; everywhere else keep the wrapped
 * type.
 *
 * <p>Never used for state, but it has a serializer snapshot (wrapping the wrapped serializer's) so
 * that a savepoint that records it restores.
 *
 * @param <T> the record type
 */
@Internal
public final class HandedOverTypeInfo<T> extends TypeInformation<T> {
    private static final long serialVersionUID = 1L;

    private final TypeInformation<T> wrapped;

    public HandedOverTypeInfo(TypeInformation<T> wrapped) {
        this.wrapped = Objects.requireNonNull(wrapped);
    }

    /** The type of {@code type} handed over without copies. */
    public static <T> HandedOverTypeInfo<T> of(Class<T> type) {
        return new HandedOverTypeInfo<>(TypeInformation.of(type));
    }

    @Override
    public boolean isBasicType() {
        return false;
    }

    @Override
    public boolean isTupleType() {
        return false;
    }

    @Override
    public int getArity() {
        return 1;
    }

    @Override
    public int getTotalFields() {
        return 1;
    }

    @Override
    public Class<T> getTypeClass() {
        return wrapped.getTypeClass();
    }

    @Override
    public boolean isKeyType() {
        return false;
    }

    @Override
    public TypeSerializer<T> createSerializer(SerializerConfig config) {
        return new Serializer<>(wrapped.createSerializer(config));
    }

    @Override
    public String toString() {
        return "HandedOver<" + wrapped + ">";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HandedOverTypeInfo
                && ((HandedOverTypeInfo<?>) o).canEqual(this)
                && wrapped.equals(((HandedOverTypeInfo<?>) o).wrapped);
    }

    @Override
    public int hashCode() {
        return 31 * wrapped.hashCode() + 7;
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof HandedOverTypeInfo;
    }

    /** The wrapped serializer, except that a copy is the record itself. */
    static final class Serializer<T> extends TypeSerializer<T> {
        private static final long serialVersionUID = 1L;

        final TypeSerializer<T> wrapped;

        Serializer(TypeSerializer<T> wrapped) {
            this.wrapped = wrapped;
        }

        @Override
        public boolean isImmutableType() {
            return wrapped.isImmutableType();
        }

        @Override
        public TypeSerializer<T> duplicate() {
            TypeSerializer<T> d = wrapped.duplicate();
            return d == wrapped ? this : new Serializer<>(d);
        }

        @Override
        public T createInstance() {
            return wrapped.createInstance();
        }

        @Override
        public T copy(T from) {
            return from;
        }

        @Override
        public T copy(T from, T reuse) {
            return from;
        }

        @Override
        public int getLength() {
            return wrapped.getLength();
        }

        @Override
        public void serialize(T record, DataOutputView target) throws IOException {
            wrapped.serialize(record, target);
        }

        @Override
        public T deserialize(DataInputView source) throws IOException {
            return wrapped.deserialize(source);
        }

        @Override
        public T deserialize(T reuse, DataInputView source) throws IOException {
            return wrapped.deserialize(reuse, source);
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            wrapped.copy(source, target);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Serializer && wrapped.equals(((Serializer<?>) o).wrapped);
        }

        @Override
        public int hashCode() {
            return wrapped.hashCode() + 13;
        }

        @Override
        public TypeSerializerSnapshot<T> snapshotConfiguration() {
            return new Snapshot<>(this);
        }
    }

    /** The snapshot of {@link Serializer}: the wrapped serializer's, nested. */
    public static final class Snapshot<T>
            extends CompositeTypeSerializerSnapshot<T, Serializer<T>> {
        /** For reading a snapshot. */
        public Snapshot() {}

        Snapshot(Serializer<T> serializer) {
            super(serializer);
        }

        @Override
        protected int getCurrentOuterSnapshotVersion() {
            return 1;
        }

        @Override
        protected TypeSerializer<?>[] getNestedSerializers(Serializer<T> outer) {
            return new TypeSerializer<?>[] {outer.wrapped};
        }

        @Override
        @SuppressWarnings("unchecked")
        protected Serializer<T> createOuterSerializerWithNestedSerializers(
                TypeSerializer<?>[] nested) {
            return new Serializer<>((TypeSerializer<T>) nested[0]);
        }
    }
}
