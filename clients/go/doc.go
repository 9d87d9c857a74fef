// Package booblik is the Go client of booblik, a message broker on an append-only log.
//
// A topic splits into partitions; producers append batches of opaque records to a partition, and
// consumers read a partition from an offset they keep themselves.
//
//   - Dial opens a Conn: one TCP connection, for one goroutine at a time. DialWith adds TLS and
//     authentication (SCRAM-SHA-256 or a token) before it returns; ClientConfig.Dial does the same
//     for every connection of a Client.
//   - Conn.Produce appends a batch to a partition; Conn.Topic routes records by key (FNV-1a, the same
//     in every booblik client).
//   - Conn.Fetch reads once; Conn.Consumer keeps a position and reads on, with Poll or with the
//     Records iterator, which waits at the end of the log instead of stopping.
//   - NewProducer batches records that arrive one at a time, per partition, behind one writer.
//   - Conn.Metadata reports partitions and their offsets.
//   - NewClient connects to a cluster: one Conn per broker, each partition's requests sent to its
//     primary, following the routes METADATA reports and the NOT_PRIMARY answers.
//     With ClientConfig.PreferZone its reads go to an in-sync replica in that zone (FETCH v4).
//   - Conn.ApplyTopics creates, changes and deletes topics (all or nothing, each change at the
//     revision it expects); Conn.ListTopics lists them by label selector; Conn.WatchTopics follows
//     their changes.
//   - Conn.ListFragments says where each segment of a partition lives: the broker's disk, the
//     topic's store, or both, and when it was persisted.
//
// Refusals from the broker are *BrokerError values, matched with errors.Is against
// ErrUnknownTopicOrPartition, ErrOffsetOutOfRange and the other sentinels; the connection stays
// usable after one. The package uses the standard library only.
package booblik
