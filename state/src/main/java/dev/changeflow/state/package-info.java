/** changeflow state. */
package dev.changeflow.state;
