/**
 * Planning past one machine: {@link dev.headroom.benchmarks.cluster.ClusterSimulation}, a discrete-event
 * simulation of many gateway nodes sharing a Redis Cluster, with and without quota leasing.
 *
 * <p>May use: anything in the tree, and the peers (benchmarks are never published).
 */
package dev.headroom.benchmarks.cluster;
