import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'teams' })
export class TeamEntity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'boolean' }) suspended!: boolean;
  @Column({ type: 'boolean', name: 'webhooks_suspended' }) webhooksSuspended!: boolean;
  @Column({ type: 'boolean', name: 'has_payment_card' }) hasPaymentCard!: boolean;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt!: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt!: Date;
}
