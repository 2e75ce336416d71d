/** changeflow sources. */
package dev.changeflow.sources;
