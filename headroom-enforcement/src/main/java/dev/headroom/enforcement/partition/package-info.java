/**
 * Who a request is counted as: {@link dev.headroom.enforcement.partition.PartitionKeyDerivation}
 * turns a policy's partitioning into a {@link dev.headroom.PartitionKey} read from a
 * {@link dev.headroom.enforcement.partition.RequestView}; the client's address comes from
 * {@link dev.headroom.enforcement.partition.ClientAddressResolver}, which trusts
 * {@code Forwarded} or {@code X-Forwarded-For} ({@link dev.headroom.enforcement.partition.ForwardedHeader})
 * only from trusted proxies ({@link dev.headroom.enforcement.partition.CidrRange}). Also here:
 * the callers who bypass a policy ({@link dev.headroom.enforcement.partition.AllowList}), API keys
 * kept as hashes ({@link dev.headroom.enforcement.partition.ApiKeys}) and the {@code pk} choices
 * ({@link dev.headroom.enforcement.partition.PartitionKeyExposures}).
 *
 * <p>May use: headroom-http ({@code dev.headroom.http}, {@code .body}) and headroom-core.
 */
package dev.headroom.enforcement.partition;
