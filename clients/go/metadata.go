package booblik

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// METADATA request v1  => topicCount [topic]
// METADATA response v1 => topicCount [name partitionCount [partition logStartOffset highWatermark]]

const metadataVersion = 1

// PartitionInfo is the state of one partition, as METADATA reports it.
type PartitionInfo struct {
	Partition      int32
	LogStartOffset int64 // the first offset still stored; moves forward with retention
	HighWatermark  int64 // the first offset not yet written: the log's end
}

// Metadata returns the partitions of the named topics, or of every topic when none is named, keyed
// by topic name and sorted by partition id. Naming a topic that does not exist fails the whole call
// with ErrUnknownTopicOrPartition: missing never looks like empty. It is METADATA v2 (its routes
// left out) where the broker has it, v1 otherwise (see Versions).
func (c *Conn) Metadata(ctx context.Context, topics ...string) (map[string][]PartitionInfo, error) {
	for i, t := range topics {
		if err := validTopic(fmt.Sprintf("topics[%d]", i), t); err != nil {
			return nil, err
		}
	}
	versions, err := c.Versions(ctx)
	if err != nil {
		return nil, err
	}
	if speaks(versions, apiMetadata, capRoutes) {
		routed, err := c.MetadataRoutes(ctx, -1, topics...)
		if err != nil {
			return nil, err
		}
		return routed.Partitions(), nil
	}
	frame := appendMetadataRequest(beginFrame(apiMetadata, metadataVersion), topics)
	body, err := c.exchange(ctx, apiMetadata, metadataRequestLabel(topics), frame, true)
	if err != nil {
		return nil, err
	}
	return decodeMetadataResponse(body)
}

// metadataRequestLabel names a METADATA request in errors, so a refusal names the topics asked for.
func metadataRequestLabel(topics []string) string {
	if len(topics) == 0 {
		return "METADATA (every topic)"
	}
	return "METADATA " + strings.Join(topics, ", ")
}

func appendMetadataRequest(b []byte, topics []string) []byte {
	b = appendInt32(b, int32(len(topics)))
	for _, t := range topics {
		b = appendString(b, t)
	}
	return b
}

const (
	metadataTopicBytesMin     = 2 + 4     // an empty name and a partition count
	metadataPartitionBytesMin = 4 + 8 + 8 // partition, logStartOffset, highWatermark
)

func decodeMetadataResponse(body []byte) (map[string][]PartitionInfo, error) {
	d := decoder{api: apiMetadata, b: body}
	topicCount := d.count("topicCount", metadataTopicBytesMin)
	out := make(map[string][]PartitionInfo, topicCount)
	for i := 0; i < topicCount && d.err == nil; i++ {
		name := d.string(fmt.Sprintf("topics[%d].name", i))
		n := d.count(fmt.Sprintf("topics[%d].partitionCount", i), metadataPartitionBytesMin)
		parts := make([]PartitionInfo, 0, n)
		for j := 0; j < n && d.err == nil; j++ {
			where := fmt.Sprintf("topics[%d].partitions[%d]", i, j)
			p := PartitionInfo{
				Partition:      d.int32(where + ".partition"),
				LogStartOffset: d.int64(where + ".logStartOffset"),
				HighWatermark:  d.int64(where + ".highWatermark"),
			}
			if d.err == nil && (p.Partition < 0 || p.LogStartOffset < 0 || p.HighWatermark < p.LogStartOffset) {
				d.fail("%s: partition %d, logStartOffset %d, highWatermark %d: expected partition >= 0 and 0 <= logStartOffset <= highWatermark",
					where, p.Partition, p.LogStartOffset, p.HighWatermark)
			}
			parts = append(parts, p)
		}
		slices.SortFunc(parts, func(a, b PartitionInfo) int { return cmp.Compare(a.Partition, b.Partition) })
		out[name] = parts
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return out, nil
}
