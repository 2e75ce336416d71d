/** changeflow sinks. */
package dev.changeflow.sinks;
