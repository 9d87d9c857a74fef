package booblik_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	booblik "github.com/youndie/booblik/clients/go"
)

// The examples that talk to a broker expect the one `npm start` runs with no flags: localhost:9092,
// topic "default" with one partition. go test compiles them without running them against it;
// TestExamplesWorkAgainstTheDefaultTopics runs them against a fake broker with that topic set.
var exampleBroker = "localhost:9092"

func Example() {
	ctx := context.Background()
	conn, err := booblik.Dial(ctx, exampleBroker)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	res, err := conn.Produce(ctx, "default", 0, [][]byte{[]byte("first"), []byte("second")}, booblik.AckWritten)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("written at offsets", res.BaseOffset, "and", res.BaseOffset+1)

	got, err := conn.Fetch(ctx, booblik.FetchRequest{Topic: "default", Partition: 0, Offset: res.BaseOffset})
	if err != nil {
		log.Fatal(err)
	}
	for _, record := range got.Records {
		fmt.Printf("%d: %s\n", record.Offset, record.Payload)
	}
}

func ExampleTopic_Send() {
	ctx := context.Background()
	conn, err := booblik.Dial(ctx, exampleBroker)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	topic, err := conn.Topic(ctx, "default")
	if err != nil {
		log.Fatal(err)
	}
	// Every record of customer-42 lands in the same partition, in every booblik client.
	res, err := topic.Send(ctx, []byte("customer-42"), []byte(`{"total": 12}`), booblik.AckWritten)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("partition", res.Partition, "offset", res.BaseOffset)
}

func ExampleConsumer_Records() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := booblik.Dial(ctx, exampleBroker)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	consumer := conn.Consumer("default", 0, 0)
	for record, err := range consumer.Records(ctx) {
		if err != nil {
			// The loop ends after an error; Position() is where a new loop would resume.
			log.Fatal(err)
		}
		fmt.Printf("%d: %s\n", record.Offset, record.Payload)
	}
	// Reached only when ctx is cancelled: at the high watermark the loop waits for more.
}

func ExampleConsumer_Poll() {
	ctx := context.Background()
	conn, err := booblik.Dial(ctx, exampleBroker)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	consumer := conn.Consumer("default", 0, 0)
	consumer.MaxWait = time.Second
	for consumer.Lag() != 0 { // -1 until the first answer, 0 once caught up
		records, err := consumer.Poll(ctx)
		var tooLarge *booblik.RecordExceedsMaxBytesError
		if errors.As(err, &tooLarge) && tooLarge.Size > 0 {
			consumer.MaxBytes = tooLarge.Size + 8 // room for the record and its header, then go on
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(records), "records; next offset", consumer.Position())
	}
}

func ExampleProducer() {
	ctx := context.Background()
	conn, err := booblik.Dial(ctx, exampleBroker)
	if err != nil {
		log.Fatal(err)
	}
	topic, err := conn.Topic(ctx, "default") // read routing before the producer takes the Conn
	if err != nil {
		log.Fatal(err)
	}
	producer, err := booblik.NewProducer(conn, booblik.ProducerConfig{}) // the zero value: the defaults
	if err != nil {
		log.Fatal(err)
	}

	var deliveries []*booblik.Delivery
	for i := 0; i < 1000; i++ {
		key := []byte(fmt.Sprintf("customer-%d", i%10))
		deliveries = append(deliveries, producer.Send("default", topic.PartitionFor(key), []byte(fmt.Sprint(i))))
	}
	if err := producer.Close(); err != nil { // sends what is queued, then closes the Conn
		log.Print(err)
	}
	for _, d := range deliveries {
		if _, err := d.Await(ctx); err != nil {
			log.Print(err)
		}
	}
}

func ExampleBrokerError() {
	err := error(&booblik.BrokerError{Code: booblik.CodeOffsetOutOfRange, API: "FETCH"})
	fmt.Println(errors.Is(err, booblik.ErrOffsetOutOfRange))
	fmt.Println(err)

	var refused *booblik.BrokerError
	if errors.As(&booblik.BrokerError{Code: 42}, &refused) {
		fmt.Println(refused.Name())
	}
	// Output:
	// true
	// booblik: FETCH refused: OFFSET_OUT_OF_RANGE (fetchOffset outside [logStartOffset, highWatermark])
	// UNKNOWN(42)
}

func ExampleRecordExceedsMaxBytesError() {
	var err error = &booblik.RecordExceedsMaxBytesError{Offset: 7, Size: 500, MaxBytes: 100}
	var tooLarge *booblik.RecordExceedsMaxBytesError
	if errors.As(err, &tooLarge) {
		fmt.Println(tooLarge.Size, tooLarge.MaxBytes)
	}
	fmt.Println(err)
	// Output:
	// 500 100
	// booblik: record at offset 7 is 500 bytes (+8 header), more than maxBytes 100 lets through
}

func ExampleConn_ApplyTopics() {
	ctx := context.Background()
	conn, err := booblik.Dial(ctx, exampleBroker)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	spec := booblik.NewTopicSpec("orders", 3) // every other field: the broker's defaults
	spec.Labels = map[string]string{"team": "payments"}
	spec.Revision = booblik.RevisionMustNotExist
	revision, err := conn.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(spec)})
	if err != nil {
		log.Fatal(err)
	}

	// Gazette's selectors: k=v, k!=v, k, !k, k in (a,b), k notin (a,b); a comma is "and".
	listing, err := conn.ListTopics(ctx, "team=payments")
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range listing.Topics {
		fmt.Println(t.Spec.Name, t.Spec.Partitions, t.Spec.Revision, t.Routes[0].Primary)
	}

	// A stale revision changes nothing, and says what the topic is at now.
	spec.Partitions, spec.Revision = 4, revision-1
	var stale *booblik.RevisionMismatchError
	if _, err := conn.ApplyTopics(ctx, []booblik.TopicChange{booblik.UpsertTopic(spec)}); errors.As(err, &stale) {
		fmt.Println(stale.Topic, "is at", stale.ActualRevision, "not", stale.ExpectedRevision)
	}

	if _, err := conn.ApplyTopics(ctx, []booblik.TopicChange{booblik.DeleteTopic("orders", revision)}); err != nil {
		log.Fatal(err)
	}
}

func ExampleConn_WatchTopics() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := booblik.Dial(ctx, exampleBroker) // a Conn of its own: the watch holds it
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	errSeen := errors.New("seen one listing")
	err = conn.WatchTopics(ctx, "team=payments", 0, func(l *booblik.TopicListing) error {
		fmt.Println(l.Revision, l.Names()) // now, then after every change of the spec store
		return errSeen                     // stop here; return nil to keep watching
	})
	if !errors.Is(err, errSeen) {
		log.Fatal(err)
	}
}

func ExampleConn_ListFragments() {
	ctx := context.Background()
	conn, err := booblik.Dial(ctx, exampleBroker)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	partitions, err := conn.ListFragments(ctx, "default", booblik.AllPartitions) // or one partition's id
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range partitions {
		for _, f := range p.Fragments { // oldest first; the last is the active segment
			last, _ := f.LastOffset()
			at, _ := f.PersistedAt()
			fmt.Println(p.Partition, f.BaseOffset, last, f.SizeBytes, f.Location, at)
		}
	}
}

func ExampleClient() {
	ctx := context.Background()
	// A cluster's brokers (any that answers will do); each partition's requests go to its primary.
	client, err := booblik.NewClient(ctx, []string{exampleBroker}, booblik.ClientConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	res, err := client.Produce(ctx, "default", 0, [][]byte{[]byte("routed")}, booblik.AckWritten)
	if err != nil {
		log.Fatal(err)
	}
	got, err := client.Fetch(ctx, booblik.FetchRequest{Topic: "default", Partition: 0, Offset: res.BaseOffset})
	if err != nil {
		log.Fatal(err)
	}
	primary, _ := client.Route("default", 0)
	fmt.Printf("%d: %s from %s\n", got.Records[0].Offset, got.Records[0].Payload, primary)
}
